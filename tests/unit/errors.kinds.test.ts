import { describe, expect, it } from 'vitest';
import { UsageError } from '../../core/cli/command';
import { DomainError } from '../../core/errors';
import { RecipeError } from '../../core/jobs/recipes';
import { HostKeyError } from '../../core/jobs/ssh/connection';
import { SchemaError } from '../../core/memory/db';
import { ModelError } from '../../core/models/client';
import { toApiError } from '../../core/server/dispatcher';

/** Every named failure of the engine is a kind of DomainError: the dispatcher maps it to its own code, never `internal`. */
describe('error kinds', () => {
  const cases: [string, Error, string][] = [
    ['ModelError http', new ModelError('HTTP 502: bad gateway', 'http', 502), 'unavailable'],
    ['ModelError timeout', new ModelError('no answer in 60 s', 'timeout'), 'timeout'],
    ['ModelError network', new ModelError('refused', 'network'), 'unavailable'],
    ['ModelError aborted', new ModelError('cancelled', 'aborted'), 'cancelled'],
    ['ModelError protocol', new ModelError('not JSON', 'protocol'), 'unavailable'],
    ['HostKeyError', new HostKeyError('unknown', 'h', 22, 'ssh-ed25519', 'SHA256:x', Buffer.from('k'), 'unknown key'), 'unauthorized'],
    ['RecipeError', new RecipeError('Recipe x.json is not valid'), 'invalid_input'],
    ['SchemaError', new SchemaError('written by a newer app'), 'conflict'],
    ['UsageError', new UsageError('--model NAME is required'), 'invalid_input'],
  ];
  it.each(cases)('%s keeps its class, message and a contract code', (_name, e, code) => {
    expect(e).toBeInstanceOf(DomainError);
    const logged: string[] = [];
    const api = toApiError(e, 'x.y', (m) => logged.push(m));
    expect(api.code).toBe(code);
    expect(api.message).toBe(e.message);
    expect(logged).toEqual([]);
  });

  it("a host key's identity travels in the details, for the person to confirm", () => {
    const api = toApiError(new HostKeyError('changed', 'h', 2222, 'ssh-ed25519', 'SHA256:abc', Buffer.from('k'), 'CHANGED'), 'jobs.submit', () => {});
    expect(api.details).toEqual({ hostKey: { status: 'changed', host: 'h', port: 2222, keyType: 'ssh-ed25519', fingerprint: 'SHA256:abc' } });
  });
});
