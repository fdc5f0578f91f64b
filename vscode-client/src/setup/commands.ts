import * as vscode from 'vscode';
import type { ChatController } from '../chat/controller';
import { redact } from '../server/diagnostics';
import { errorReason } from '../server/errors';
import { API_KEY_SECRET } from '../server/server';
import type { ShiroServer } from '../server/server';
import { AGENTS, Method } from '../shared/protocol';
import type { Agent, ModelsDetectResult, ModelsResult } from '../shared/protocol';
import {
  detectParams,
  detectionReport,
  endpointReport,
  localModelItems,
  modelItems,
  needsSetup,
  servedChoice,
  shownModel,
} from './setup';
import type { PanelInfo, WebviewMessage } from '../shared/webviewProtocol';

type SetupAction = Extract<WebviewMessage, { type: 'pickModel' | 'pickAgent' | 'setApiKey' | 'detectLocal' | 'setup' }>;

/** The model endpoint, the model, the agent variant and the API key: the pickers and the setup card's actions. */
export class SetupCommands {
  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly srv: ShiroServer,
    private readonly ctl: ChatController,
  ) {}

  /** What the panel's header and setup card show. */
  async panelInfo(): Promise<PanelInfo> {
    const cfg = vscode.workspace.getConfiguration('shiro');
    const baseUrl = this.srv.baseUrl() ?? '';
    const model = cfg.get<string>('model') ?? '';
    const hasKey = Boolean(await this.context.secrets.get(API_KEY_SECRET));
    return {
      model: shownModel(model, this.ctl.session?.model),
      agent: this.ctl.agent,
      setup: {
        show: needsSetup({ hasKey, envKey: Boolean(process.env.OPENAI_API_KEY), baseUrl }),
        baseUrl,
        model,
        hasKey,
      },
    };
  }

  async onAction(m: SetupAction): Promise<void> {
    if (m.type === 'pickModel') await this.pickModel();
    else if (m.type === 'pickAgent') await this.pickAgent();
    else if (m.type === 'setApiKey') await vscode.commands.executeCommand('shiro.setApiKey');
    else if (m.type === 'detectLocal') await this.detectLocal();
    else await this.saveAndTest(m.baseUrl, m.model);
  }

  private async listModels(baseUrl?: string): Promise<ModelsResult> {
    try {
      return await this.srv.sendRequest(Method.models, baseUrl ? { baseUrl } : {});
    } catch (error) {
      return {
        baseUrl: baseUrl ? redact(baseUrl) : '(the configured endpoint)',
        preset: null,
        models: [],
        error: redact(`could not list models: ${errorReason(error)}`),
      };
    }
  }

  async pickModel(): Promise<void> {
    const cfg = vscode.workspace.getConfiguration('shiro');
    const current = shownModel(cfg.get<string>('model') ?? '', this.ctl.session?.model);
    const pick = vscode.window.createQuickPick<vscode.QuickPickItem & { model: string }>();
    pick.title = 'Shiro: Model';
    pick.placeholder = 'Pick a model the endpoint serves, or type any model name';
    pick.busy = true;
    pick.items = modelItems([], current);
    let models: ModelsResult['models'] = [];
    pick.onDidChangeValue(value => {
      pick.items = modelItems(models, current, value);
    });
    const chosen = new Promise<string | undefined>(resolve => {
      pick.onDidAccept(() => {
        resolve(pick.selectedItems[0]?.model ?? (pick.value.trim() || undefined));
        pick.hide();
      });
      pick.onDidHide(() => {
        resolve(undefined);
        pick.dispose();
      });
    });
    pick.show();
    void this.listModels().then(r => {
      models = r.models;
      pick.busy = false;
      pick.items = modelItems(models, current, pick.value);
      if (r.error) pick.placeholder = `${r.error} — type a model name`;
    });
    const model = await chosen;
    if (!model || model === current) return;
    await cfg.update('model', model, vscode.ConfigurationTarget.Global);
    this.ctl.model.addNotice(`Model: ${model}`);
  }

  /** Probe Ollama, LM Studio, llama.cpp and vLLM on their usual ports; pick one of their models. */
  async detectLocal(): Promise<void> {
    let found: ModelsDetectResult;
    try {
      found = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Shiro: looking for local model servers…' },
        () => this.srv.sendRequest(Method.modelsDetect, detectParams(this.srv.settings().get('localServerUrls'))),
      );
    } catch (error) {
      this.ctl.postSetupResult(false, `Could not look for local servers: ${errorReason(error)}`);
      return;
    }
    const problem = detectionReport(found);
    if (problem) {
      this.ctl.postSetupResult(false, problem);
      void vscode.window.showWarningMessage(problem);
      return;
    }
    const pick = await vscode.window.showQuickPick(localModelItems(found), {
      title: 'Shiro: Local model',
      placeHolder: found.message,
      matchOnDescription: true,
    });
    if (!pick) return;
    const cfg = vscode.workspace.getConfiguration('shiro');
    await cfg.update('baseUrl', pick.baseUrl, vscode.ConfigurationTarget.Global);
    await cfg.update('model', pick.model, vscode.ConfigurationTarget.Global);
    await this.srv.pushConfiguration();
    this.ctl.postSetupResult(true, `Using ${pick.model} at ${pick.baseUrl} (no API key needed).`);
    this.ctl.model.addNotice(`Model: ${pick.model} at ${pick.baseUrl}`);
    await this.ctl.sendInfo();
  }

  async pickAgent(): Promise<void> {
    const descriptions: Record<Agent, string> = {
      default: 'the everyday agent',
      quick: 'short answers, few steps',
      deep: 'thinks longer, reads more',
      plan: 'plans first, changes nothing',
      review: 'reviews code, changes nothing',
    };
    const pick = await vscode.window.showQuickPick(
      AGENTS.map(a => ({
        label: a,
        description: a === this.ctl.agent ? `${descriptions[a]} · current` : descriptions[a],
        agent: a,
      })),
      { title: 'Shiro: Agent variant', placeHolder: 'Used for the next prompts' },
    );
    if (!pick) return;
    this.ctl.agent = pick.agent;
    await this.ctl.sendInfo();
  }

  private async saveAndTest(baseUrl: string, model: string): Promise<void> {
    const cfg = vscode.workspace.getConfiguration('shiro');
    if (baseUrl !== (this.srv.baseUrl() ?? '')) await cfg.update('baseUrl', baseUrl, vscode.ConfigurationTarget.Global);
    if (model !== (cfg.get<string>('model') ?? '')) await cfg.update('model', model, vscode.ConfigurationTarget.Global);
    await this.srv.pushConfiguration();
    const listed = await this.listModels(baseUrl || undefined);
    const report = endpointReport(listed);
    const chosen = listed.error ? model : await this.servedModel(listed.models, model);
    if (chosen && chosen !== model) {
      await cfg.update('model', chosen, vscode.ConfigurationTarget.Global);
      await this.srv.pushConfiguration();
      report.text += ` Using ${chosen}.`;
      this.ctl.model.addNotice(`Model: ${chosen}`);
    }
    await this.ctl.sendInfo(); // the bar shows the model in use, while the card is still up
    this.ctl.postSetupResult(report.ok, report.text); // the card stays to say so (hidden by the next change)
  }

  /** The model the endpoint serves (``servedChoice``): asked for in a picker when it serves several. */
  private async servedModel(models: ModelsResult['models'], typed: string): Promise<string> {
    const choice = servedChoice(
      models.map(m => m.id),
      typed,
    );
    if ('use' in choice) return choice.use;
    if ('keep' in choice) return typed;
    const pick = await vscode.window.showQuickPick(modelItems(models, ''), {
      title: 'Shiro: Model',
      placeHolder: 'The endpoint serves these models: pick the one to use',
    });
    return pick?.model ?? typed;
  }

  async setApiKey(): Promise<void> {
    const key = await vscode.window.showInputBox({
      title: 'Shiro: Set API key',
      prompt: 'Stored in VS Code SecretStorage, never in settings. Empty clears it.',
      password: true,
      ignoreFocusOut: true,
    });
    if (key === undefined) return;
    if (key.trim()) await this.context.secrets.store(API_KEY_SECRET, key.trim());
    else await this.context.secrets.delete(API_KEY_SECRET);
    await this.srv.pushConfiguration();
    void vscode.window.showInformationMessage(key.trim() ? 'Shiro: API key saved.' : 'Shiro: API key cleared.');
  }

  async forgetEndpointAnswers(): Promise<void> {
    const n = await this.srv.forgetEndpointAnswers();
    void vscode.window.showInformationMessage(
      `Shiro: forgot ${n} answer${n === 1 ? '' : 's'} about workspace endpoints; asked again at the next start.`,
    );
    await this.srv.start();
  }
}
