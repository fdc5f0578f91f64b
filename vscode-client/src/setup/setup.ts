// First run and the model picker: what the panel shows about the endpoint. Pure (no vscode import).
import type { ModelsDetectResult, ModelsResult } from '../shared/protocol';

/** Nothing to talk to yet: no key (SecretStorage or OPENAI_API_KEY) and no base URL (a local one needs no key). */
export function needsSetup(o: { hasKey: boolean; envKey: boolean; baseUrl: string }): boolean {
  return !o.hasKey && !o.envKey && !o.baseUrl.trim();
}

/** The model name the panel shows: the setting, else the session's, else the server's default. */
export function shownModel(setting: string, sessionModel: string | undefined): string {
  return setting.trim() || sessionModel?.trim() || 'default model';
}

/** What a connection test says, in words. */
export function endpointReport(r: ModelsResult): { ok: boolean; text: string } {
  if (r.error) return { ok: false, text: `${r.baseUrl}: ${r.error}` };
  if (!r.models.length) return { ok: true, text: `${r.baseUrl} answered, but lists no models: type the model name.` };
  const names = r.models
    .slice(0, 5)
    .map(m => m.id)
    .join(', ');
  const more = r.models.length > 5 ? ` and ${r.models.length - 5} more` : '';
  return {
    ok: true,
    text:
      `Connected to ${r.baseUrl}${r.preset ? ` (${r.preset})` : ''}: ` +
      `${r.models.length} model${r.models.length === 1 ? '' : 's'} (${names}${more}).`,
  };
}

/**
 * The model to use after a connection test, from what the endpoint serves: the one it serves when it serves
 * exactly one (a local server serves any name, but the user means its model), a pick among several when no
 * name was typed; the typed name otherwise (`keep`).
 */
export function servedChoice(
  served: readonly string[],
  typed: string,
): { use: string } | { pick: readonly string[] } | { keep: true } {
  const name = typed.trim();
  if (served.includes(name)) return { keep: true };
  if (served.length === 1) return { use: served[0] };
  if (served.length > 1 && !name) return { pick: served };
  return { keep: true };
}

export interface ModelItem {
  label: string;
  description?: string;
  model: string;
}

/**
 * The picker's rows: what the user typed (when it is not a listed model), then the endpoint's models,
 * the current one first and marked. Typed text filters nothing away here: the QuickPick matches it.
 */
export function modelItems(
  models: readonly { id: string; contextWindow?: number | null }[],
  current: string,
  typed = '',
): ModelItem[] {
  const rows: ModelItem[] = [];
  const t = typed.trim();
  if (t && !models.some(m => m.id === t)) rows.push({ label: t, description: 'use this name', model: t });
  const sorted = [...models].sort(
    (a, b) => Number(b.id === current) - Number(a.id === current) || a.id.localeCompare(b.id),
  );
  for (const m of sorted) {
    const parts = [
      m.id === current ? 'current' : '',
      m.contextWindow ? `${Math.round(m.contextWindow / 1024)}k context` : '',
    ].filter(Boolean);
    rows.push({ label: m.id, ...(parts.length ? { description: parts.join(' · ') } : {}), model: m.id });
  }
  if (!rows.length && current) rows.push({ label: current, description: 'current', model: current });
  return rows;
}

export interface LocalModelItem {
  label: string;
  description: string;
  baseUrl: string;
  model: string;
}

/** One row per model of each local server that answered, the server's name and window alongside. */
export function localModelItems(found: ModelsDetectResult): LocalModelItem[] {
  return found.endpoints.flatMap(e =>
    e.models.map(m => ({
      label: m.id,
      description: [
        `${e.presetName ?? e.preset ?? 'server'} · ${e.baseUrl.replace(/^https?:\/\//, '')}`,
        m.contextWindow ? `${Math.round(m.contextWindow / 1024)}k context` : '',
        m.nativeTools === false ? 'tools described in the prompt' : '',
      ]
        .filter(Boolean)
        .join(' · '),
      baseUrl: e.baseUrl,
      model: m.id,
    })),
  );
}

/** `shiro.localServerUrls` as shiro/models/detect params: the URLs given, else the server's presets. */
export function detectParams(urls: unknown): { baseUrls?: string[] } {
  const given = Array.isArray(urls)
    ? urls.filter((u): u is string => typeof u === 'string' && u.trim() !== '').map(u => u.trim())
    : [];
  return given.length ? { baseUrls: given } : {};
}

/** What to say when detection found servers but no model on any of them, or nothing at all. */
export function detectionReport(found: ModelsDetectResult): string | undefined {
  if (!found.endpoints.length) return found.message;
  if (!found.endpoints.some(e => e.models.length))
    return `${found.message} None of them lists a model yet: load or pull one first.`;
  return undefined;
}
