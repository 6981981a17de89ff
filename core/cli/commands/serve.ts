import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import type { Command } from '../command';
import { UsageError } from '../command';
import { commandInfo } from '../catalog';
import { startApp } from '../../host/startApp';
import { defaultDataDir } from '../../services/services';

export const serveCommand: Command = {
  ...commandInfo('serve'),
  async run(argv, io) {
    const { values } = parseArgs({
      args: argv,
      options: {
        port: { type: 'string' },
        'data-dir': { type: 'string' },
        host: { type: 'string' },
        token: { type: 'string' },
      },
      strict: true,
    });
    const port = values.port === undefined ? 8765 : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be 0-65535, got ${values.port}`);
    const dataDir = resolve(values['data-dir'] ?? defaultDataDir());
    const app = await startApp({
      dataDir,
      port,
      ...(values.host !== undefined ? { host: values.host, hostExplicit: true } : {}),
      ...(values.token !== undefined ? { token: values.token } : {}),
      log: (m) => io.err(m),
    });
    try {
      await app.ready;
    } catch (e) {
      await app.close();
      throw e;
    }
    io.out(`SPADE Workbench is serving at ${app.host.url}`);
    io.out(`Data directory: ${dataDir}`);
    if (app.host.token) io.out('The API can run code: share this URL (it holds the access token) only with yourself.');
    io.out('Press Ctrl+C to stop.');
    await new Promise<void>((done) => {
      const stop = () => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        void app.close().then(done);
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
    return 0;
  },
};
