// DOM helpers and the one channel to the extension host, shared by the panel's parts.
import type { WebviewMessage } from '../src/shared/webviewProtocol';

interface VsCodeApi {
  postMessage(m: WebviewMessage): void;
  getState(): unknown;
  setState(s: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

/** The host's API: acquireVsCodeApi may be called once per document. */
export const host = acquireVsCodeApi();
export type Post = (m: WebviewMessage) => void;
export const post: Post = m => host.postMessage(m);

export const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  cls?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
