import { errorMessage, type CallName } from '../api';
import type { Handlers } from '../server/dispatcher';
import type { Services } from '../services/services';
import { appVersion } from '../base/appInfo';
import { DomainError } from '../errors';

/** Only plain web links leave the app; file:, javascript:, custom schemes and credentials never do. */
export function validateExternalUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DomainError('invalid_input', `Not a valid URL: ${raw.slice(0, 200)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new DomainError('invalid_input', `Only http and https links can be opened (got ${url.protocol})`);
  }
  if (url.username || url.password) throw new DomainError('invalid_input', 'Links with embedded credentials are refused');
  return url;
}

function databaseHealth(s: Services) {
  const integrity = s.integrity;
  try {
    return { ok: integrity.ok, schemaVersion: s.schemaVersion(), integrity, writesPaused: s.writesPaused, ...(integrity.ok ? {} : { message: `${integrity.truncated ? 'at least ' : ''}${integrity.problems.length} problem(s) found by the ${integrity.checked} check` }) };
  } catch (e) {
    return { ok: false, schemaVersion: 0, message: errorMessage(e), integrity, writesPaused: s.writesPaused };
  }
}

type AppCalls = Extract<CallName, `app.${string}` | `settings.${string}`>;

export function appHandlers(s: Services): Pick<Handlers, AppCalls> {
  return {
    'app.info': () => ({
      name: 'SPADE Workbench',
      version: appVersion(),
      shell: s.shell,
      platform: `${process.platform}-${process.arch}`,
      dataDir: s.dataDir,
      databasePath: s.dbPath,
      nodeVersion: process.versions.node,
      picker: s.platform.pickPaths !== undefined,
    }),
    'app.health': () => {
      const database = databaseHealth(s);
      return {
        ok: database.ok,
        uptimeSec: (Date.now() - s.startedAt) / 1000,
        database,
        components: s.components(),
      };
    },
    'app.checkDatabase': ({ full }) => {
      s.checkDatabase(full);
      return databaseHealth(s);
    },
    'app.resumeWrites': () => {
      s.resumeWrites();
      return databaseHealth(s);
    },
    'settings.get': () => s.settings.get(),
    'settings.update': (patch) => {
      const next = s.settings.update(patch);
      s.events.emit('settings.changed', next);
      return next;
    },
    'app.pickPaths': async (opts) => {
      if (!s.platform.pickPaths) return { available: false, paths: [] };
      return { available: true, paths: await s.platform.pickPaths(opts) };
    },
    'app.openExternal': async ({ url }) => {
      const valid = validateExternalUrl(url);
      if (!s.platform.openExternal) return { opened: false };
      await s.platform.openExternal(valid.toString());
      return { opened: true };
    },
  };
}
