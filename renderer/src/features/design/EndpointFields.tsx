/** A model endpoint as the Design form asks for it: the embedded model by default, or a served one. */
export interface EndpointForm {
  baseUrl: string;
  model: string;
  maxTokens: number;
}

export const LOCAL_MODEL = 'SmolLM2-135M-Instruct';
export const LOCAL_ENDPOINT: EndpointForm = { baseUrl: 'local', model: LOCAL_MODEL, maxTokens: 2048 };

export function EndpointFields({ label, value, onChange, testId }: { label: string; value: EndpointForm; onChange(v: EndpointForm): void; testId: string }) {
  const local = value.baseUrl.trim() === 'local';
  return (
    <fieldset className="design-endpoint" data-testid={testId}>
      <legend>{label}</legend>
      <label>
        endpoint <input value={value.baseUrl} onChange={(e) => onChange({ ...value, baseUrl: e.target.value })} placeholder="http://host:port/v1 or local" data-testid={`${testId}-url`} />
      </label>
      <button
        type="button"
        title="The embedded model (SmolLM2-135M-Instruct, GGUF) on this machine's CPU: no server needed"
        disabled={local && value.model === LOCAL_MODEL}
        onClick={() => onChange({ ...value, baseUrl: 'local', model: LOCAL_MODEL })}
      >
        local
      </button>
      <label>
        model <input value={value.model} onChange={(e) => onChange({ ...value, model: e.target.value })} data-testid={`${testId}-model`} />
      </label>
      <label title="Most tokens in one answer">
        max tokens <input type="number" min={16} max={1_000_000} value={value.maxTokens} onChange={(e) => onChange({ ...value, maxTokens: Math.max(16, Math.round(Number(e.target.value) || 16)) })} className="design-ids" />
      </label>
    </fieldset>
  );
}
