import type { EndpointInput } from '../../../core/api/calls/models';

/**
 * The model endpoint the app played with last (Play with a model, the OpenEnv URL page, an episode's
 * model turn), kept in the browser's storage under one key so each of them starts from it.
 */
export const ENDPOINT_KEY = 'spade.llm.endpoint';

export const DEFAULT_ENDPOINT: EndpointInput = { baseUrl: 'http://127.0.0.1:30000/v1', model: '', apiKeySecret: null, temperature: 1, topP: 0.95, topK: 20, maxTokens: 8192, thinking: null, concurrency: 8 };

/** The saved endpoint, or null when there is none (or it is corrupt). */
export function storedEndpoint(): EndpointInput | null {
  try {
    const v = JSON.parse(localStorage.getItem(ENDPOINT_KEY) ?? 'null') as EndpointInput | null;
    if (v && typeof v.baseUrl === 'string') return v;
  } catch {
    // a corrupt saved value: as if none were saved
  }
  return null;
}

export function savedEndpoint(): EndpointInput {
  return storedEndpoint() ?? DEFAULT_ENDPOINT;
}

export function saveEndpoint(e: EndpointInput): void {
  localStorage.setItem(ENDPOINT_KEY, JSON.stringify(e));
}
