import type { CallName } from '../../core/api';
import { sha256 } from '../../core/memory/parse';

const SAMPLE_SRC = 'class ContractSampleEnv:\n    def reset(self, seed=None):\n        return "hi", {}\n';
const SAMPLE_HASH = sha256(SAMPLE_SRC);

/**
 * Valid example inputs for every call in the contract, run in order against two fresh,
 * identical apps (one in-process, one over WebSocket). `volatile` names result fields that
 * legitimately differ between two runs (clocks, generated ids) and are dropped before comparing.
 * The contract test fails when a call has no sample here, so a new call cannot skip it.
 */
export interface SampleContext {
  /** Version hash of library environment 1 (both apps load the same seed pack first). */
  firstHash: string;
  /** A fresh folder per app, for calls that write files. */
  outDir: string;
}

export interface Sample {
  call: CallName;
  input: unknown | ((ctx: SampleContext) => unknown);
  volatile?: string[];
}

export const samples: Sample[] = [
  { call: 'app.info', input: {}, volatile: ['dataDir', 'databasePath'] },
  { call: 'app.health', input: {}, volatile: ['uptimeSec', 'checkedAt'] },
  { call: 'app.checkDatabase', input: { full: true }, volatile: ['checkedAt'] },
  { call: 'app.resumeWrites', input: { confirm: true }, volatile: ['checkedAt'] },
  { call: 'settings.get', input: {} },
  { call: 'settings.update', input: { theme: 'dark', maxTurns: 30 } },
  { call: 'settings.get', input: {} },
  { call: 'app.openExternal', input: { url: 'https://arxiv.org/abs/2608.19197' } },
  { call: 'app.pickPaths', input: { title: 'Import', folders: true } },
  // Memory: both apps start from the seed pack, so ids and hashes agree.
  { call: 'memory.stats', input: {}, volatile: ['databaseBytes'] },
  { call: 'memory.search', input: { query: 'guess' }, volatile: ['updatedAt', 'tookMs'] },
  { call: 'memory.search', input: { query: '', filters: { kind: 'tool-use' }, sort: { field: 'name', dir: 'asc' } }, volatile: ['updatedAt', 'tookMs'] },
  { call: 'memory.matchingIds', input: { query: 'guess', filters: { kind: 'game' } } },
  { call: 'memory.facets', input: {} },
  { call: 'memory.get', input: { id: 1 }, volatile: ['updatedAt', 'createdAt', 'seenAt', 'sourcePath', 'path'] },
  { call: 'memory.get', input: (c: SampleContext) => ({ hash: c.firstHash }), volatile: ['updatedAt', 'createdAt', 'seenAt', 'sourcePath', 'path'] },
  { call: 'memory.version', input: (c: SampleContext) => ({ hash: c.firstHash }), volatile: ['createdAt'] },
  { call: 'memory.versions', input: { envId: 1 }, volatile: ['createdAt'] },
  { call: 'memory.addVersion', input: (c: SampleContext) => ({ envId: 1, source: 'class EditedEnv:\n    pass\n', parentHash: c.firstHash, message: 'contract' }), volatile: ['createdAt'] },
  { call: 'memory.versions', input: { envId: 1 }, volatile: ['createdAt'] },
  { call: 'memory.setSeed', input: { ids: [1, 2], seed: true } },
  { call: 'memory.tag', input: { ids: [1, 3], add: ['contract'], remove: [] } },
  { call: 'memory.update', input: { id: 2, notes: 'checked by the contract test', rating: 4 }, volatile: ['updatedAt', 'createdAt', 'seenAt', 'sourcePath', 'path'] },
  { call: 'memory.search', input: { query: '', filters: { seed: true } }, volatile: ['updatedAt', 'tookMs'] },
  { call: 'memory.importStatus', input: { jobId: 'seed-pack' }, volatile: ['durationMs', 'paths', 'path', 'currentPath'] },
  { call: 'memory.importCancel', input: { jobId: 'no-such-import' } },
  { call: 'memory.import', input: { paths: ['/nonexistent/spade-contract-path'], jobId: 'contract-missing' } },
  { call: 'memory.export', input: (c: SampleContext) => ({ selection: { seeds: true }, format: 'jsonl', outDir: c.outDir }), volatile: ['files', 'outDir'] },
  { call: 'jobs.list', input: {} },
  { call: 'jobs.recipes', input: {} },
  { call: 'jobs.sshHosts', input: {} },
  { call: 'jobs.secrets', input: {} },
  { call: 'jobs.setSecret', input: { name: 'WANDB_API_KEY', value: 'sample-secret-value' } },
  { call: 'jobs.setSecret', input: { name: 'WANDB_API_KEY', value: '' } },
  { call: 'jobs.get', input: { id: 'no-such-job' } },
  { call: 'jobs.log', input: { id: 'no-such-job', offset: 0 } },
  { call: 'jobs.metrics', input: { id: 'no-such-job' } },
  { call: 'jobs.stop', input: { id: 'no-such-job' } },
  { call: 'jobs.watch', input: { id: 'no-such-job' } },
  { call: 'jobs.remove', input: { id: 'no-such-job' } },
  { call: 'jobs.trustHost', input: { host: '127.0.0.1', port: 1, fingerprint: `SHA256:${'A'.repeat(43)}` } },
  { call: 'jobs.probeHost', input: { ssh: { host: '127.0.0.1', port: 1 } } },
  { call: 'jobs.submit', input: { name: 'x', backend: 'local', recipe: 'no-such-recipe' } },
  { call: 'jobs.attach', input: { name: 'x', backend: 'ray', externalId: 'spade_games_8b_1', ray: { address: 'http://127.0.0.1:1' } } },
  // Episodes: without an environment in the library these are deterministic on both apps.
  { call: 'episodes.list', input: {} },
  { call: 'episodes.list', input: { envName: 'GuessNumberEnv', policy: 'interactive', hint: false, outcome: 'unfinished', since: '2026-01-01', until: '2100-12-31' } },
  { call: 'episodes.get', input: { id: 1 } },
  { call: 'episodes.inspect', input: { id: 1, idx: 0 } },
  { call: 'episodes.open', input: { hash: '0000000000000000000000000000000000000000000000000000000000000000', seed: 1 } },
  { call: 'episodes.act', input: { id: 1, action: '\\boxed{1}' } },
  { call: 'episodes.resetAgain', input: { id: 1 } },
  { call: 'episodes.run', input: { id: 1, policy: { kind: 'random' } } },
  { call: 'episodes.scrub', input: { id: 1, idx: 0 } },
  { call: 'episodes.close', input: { id: 1 } },
  { call: 'episodes.delete', input: { ids: [1] } },
  { call: 'episodes.replay', input: { id: 1 } },
  { call: 'episodes.importTrajectory', input: { text: '[{"role":"user","content":"x"}]', envHash: '0000000000000000000000000000000000000000000000000000000000000000' } },
  { call: 'episodes.exportJsonl', input: { ids: [1] } },
  { call: 'episodes.importJsonl', input: { text: '{"format":"other"}' } },
  { call: 'episodes.regret', input: { hash: '0000000000000000000000000000000000000000000000000000000000000000', seeds: 2, policy: { kind: 'solution' } } },
  { call: 'episodes.regretCancel', input: { runId: 'no-such-run' } },
  { call: 'episodes.openCancel', input: { requestId: 'no-such-open' } },
  { call: 'episodes.cancel', input: { requestId: 'no-such-request' } },
  // models: a port nothing listens on answers at once; no environment in the library to play.
  { call: 'models.ping', input: { endpoint: { baseUrl: 'http://127.0.0.1:1/v1', model: 'm', retries: 0 } }, volatile: ['latencyMs'] },
  { call: 'models.turn', input: { id: 1, endpoint: { baseUrl: 'http://127.0.0.1:1/v1', model: 'm' } } },
  { call: 'models.play', input: { hashes: ['0000000000000000000000000000000000000000000000000000000000000000'], endpoint: { baseUrl: 'http://127.0.0.1:1/v1', model: 'm' } } },
  { call: 'runs.list', input: {} },
  { call: 'runs.get', input: { id: 'no-such-run' } },
  { call: 'runs.compare', input: { a: 'no-such-run', b: 'other-run' } },
  { call: 'runs.measured', input: (c: SampleContext) => ({ hashes: [c.firstHash] }) },
  { call: 'runs.resume', input: { id: 'no-such-run' } },
  { call: 'runs.delete', input: { id: 'no-such-run' } },
  // regret sweeps: a query that matches nothing is refused (no sweep starts); refusals for a missing sweep.
  { call: 'runs.sweepStart', input: { query: 'no-such-environment-anywhere', seeds: 1, policy: { kind: 'solution' }, target: { kind: 'local' } } },
  { call: 'runs.sweeps', input: { limit: 5 } },
  { call: 'runs.sweepResume', input: { sweepId: 'no-such-sweep' } },
  { call: 'runs.sweepCancel', input: { sweepId: 'no-such-sweep' } },
  { call: 'runs.sweepReport', input: { sweepId: 'no-such-sweep' } },
  // design: the seed pack is memory, so the preview's prompt and seeds agree. design.start is refused
  // before a round exists (its template names a placeholder the workbench does not fill): a round
  // running beside the later samples would only add load to them (they are timed by the test's limit).
  { call: 'design.preview', input: { skills: ['Logical Deduction'], seed: 3 } },
  // openenv: a server over the seed pack's guessing games on any free port (its URL and clock differ per app).
  { call: 'openenv.status', input: {} },
  { call: 'openenv.start', input: { selection: 'guess', port: 0, seeds: 2 }, volatile: ['url', 'startedAt'] },
  { call: 'openenv.status', input: {}, volatile: ['url', 'startedAt'] },
  { call: 'openenv.stop', input: {} },
  { call: 'design.list', input: {} },
  { call: 'design.get', input: { id: 'no-such-round' } },
  { call: 'design.cancel', input: { id: 'no-such-round' } },
  { call: 'design.start', input: { skills: ['Logical Deduction'], count: 1, template: 'Write a {{game_name}}.', designer: { baseUrl: 'http://127.0.0.1:1/v1', model: 'm', retries: 0 }, agent: null } },  { call: 'audit.summary', input: {}, volatile: ['environments'] },
  { call: 'audit.results', input: { hash: '0000000000000000000000000000000000000000000000000000000000000000' } },
  { call: 'audit.replay', input: { hash: '0000000000000000000000000000000000000000000000000000000000000000', checkId: 'reset-leak' } },
  { call: 'memory.setStats', input: { hash: '0000000000000000000000000000000000000000000000000000000000000000', regret: 0.5, rHint: 0.75, rNoHint: 0.25 } },
  { call: 'memory.snippets', input: { query: 'reset', ids: [1] } },
  { call: 'memory.jobImports', input: { jobId: 'no-such-job' } },
  { call: 'audit.verdicts', input: { hashes: ['0000000000000000000000000000000000000000000000000000000000000000'] } },
  { call: 'audit.run', input: { hash: '0000000000000000000000000000000000000000000000000000000000000000' } },
  { call: 'audit.batch', input: { envIds: [], checks: ['spade.*'] }, volatile: ['batchId'] },
  { call: 'audit.batches', input: { limit: 5 }, volatile: ['id', 'createdAt', 'updatedAt'] },
  { call: 'audit.cancel', input: { batchId: 'no-such-batch' } },
  { call: 'audit.runCancel', input: { runId: 'no-such-run' } },
  { call: 'audit.resume', input: { batchId: 'no-such-batch' } },
  { call: 'audit.environments', input: { checkId: 'reset-leak', status: 'fail' } },
  // pool audit sweeps: a query that matches nothing is refused (no sweep starts); refusals for a missing sweep.
  { call: 'audit.poolStart', input: { query: 'no-such-environment-anywhere', target: { kind: 'local' } } },
  { call: 'audit.sweeps', input: { limit: 5 }, volatile: ['id', 'createdAt', 'updatedAt'] },
  { call: 'audit.sweepResume', input: { sweepId: 'no-such-sweep' } },
  { call: 'audit.sweepCancel', input: { sweepId: 'no-such-sweep' } },
  { call: 'audit.sweepResults', input: { sweepId: 'no-such-sweep' } },
  { call: 'audit.sweepHosts', input: {} },
  // editor: a fresh environment, its draft, a save, a diff and a fork; then refusals for a missing one.
  { call: 'editor.create', input: { source: SAMPLE_SRC, origin: 'paste' }, volatile: ['envId'] },
  { call: 'editor.drafts', input: {} },
  { call: 'editor.open', input: { envId: 999_999 } },
  { call: 'editor.draftSave', input: { envId: 999_999, baseHash: SAMPLE_HASH, source: 'x = 1\n' } },
  { call: 'editor.draftDiscard', input: { envId: 999_999 } },
  { call: 'editor.save', input: { envId: 999_999, parentHash: SAMPLE_HASH, source: 'x = 2\n', check: false } },
  { call: 'editor.revert', input: { envId: 999_999, hash: SAMPLE_HASH } },
  { call: 'editor.versions', input: { envId: 999_999 } },
  { call: 'editor.diff', input: { left: { hash: SAMPLE_HASH }, right: { hash: SAMPLE_HASH } } },
  { call: 'editor.fork', input: { envId: 999_999 } },
  { call: 'editor.writeBackPreview', input: { envId: 999_999 } },
  { call: 'editor.writeBack', input: { envId: 999_999, expectedFileHash: null } },
  { call: 'editor.checkSyntax', input: { source: 'x = (\n' } },
  { call: 'editor.checkLoadCancel', input: { requestId: 'no-such-check' } },
  { call: 'editor.checkLoad', input: { source: 'class Helper:\n    pass\n' } },  // runtime: a session on the Pyodide pool; the session id differs per app, so later calls use an unknown one.
  { call: 'runtime.checkSyntax', input: { source: 'x = (\n' } },
  { call: 'runtime.open', input: { source: SAMPLE_SRC.replace('return "hi", {}', 'return "hi", {}\n    def step(self, a):\n        return "o", 1.0, True, False, {}'), runtime: 'pyodide' }, volatile: ['sessionId', 'elapsedMs'] },
  { call: 'runtime.status', input: {}, volatile: ['pool', 'native'] },
  { call: 'runtime.cancelStart', input: {}, volatile: ['cancelled'] },
  { call: 'runtime.reset', input: { sessionId: 'rs-none', seed: 1 } },
  { call: 'runtime.step', input: { sessionId: 'rs-none', action: '\\boxed{1}' } },
  { call: 'runtime.play', input: { sessionId: 'rs-none', actions: ['\\boxed{1}'], seed: 1 } },
  { call: 'runtime.state', input: { sessionId: 'rs-none' } },
  { call: 'runtime.solution', input: { sessionId: 'rs-none' } },
  { call: 'runtime.snapshot', input: { sessionId: 'rs-none' } },
  { call: 'runtime.restore', input: { sessionId: 'rs-none', token: 'rs-none:1' } },
  { call: 'runtime.close', input: { sessionId: 'rs-none' } },
];

/** Inputs each call must refuse, beyond the generic ones the test sends to every call. */
export const invalidSamples: { call: CallName; input: unknown }[] = [
  { call: 'audit.batch', input: { all: true, checks: ['no such check!'] } },
  { call: 'audit.run', input: { hash: 'abc' } },
  { call: 'openenv.start', input: { selection: 'guess', port: 70000 } },
  { call: 'openenv.start', input: { selection: 'guess', hint: 'sometimes' } },
  { call: 'settings.update', input: { theme: 'purple' } },
  { call: 'settings.update', input: { stepTimeoutSec: 0 } },
  { call: 'app.openExternal', input: { url: 'file:///etc/passwd' } },
  { call: 'app.openExternal', input: { url: 'x'.repeat(5000) } },
  { call: 'jobs.submit', input: { name: 'x', backend: 'local', command: ['true'], env: { 'BAD NAME': 'v' } } },
  { call: 'jobs.setSecret', input: { name: 'K', value: 'two\nlines' } },
  { call: 'jobs.probeHost', input: { ssh: { host: 'h; rm -rf /' } } },
  { call: 'jobs.attach', input: { name: 'x', backend: 'ray', externalId: 'a b; id' } },
  { call: 'episodes.open', input: { hash: 'not-a-hash' } },
  { call: 'episodes.run', input: { id: 1, policy: { kind: 'telepathy' } } },
  { call: 'episodes.run', input: { id: 1, policy: { kind: 'random' }, until: { kind: 'expr', expr: '' } } },
  { call: 'episodes.scrub', input: { id: 1, idx: -1 } },
  { call: 'models.play', input: { hashes: [], endpoint: { baseUrl: 'http://127.0.0.1:1/v1', model: 'm' } } },
  { call: 'runs.get', input: { id: 'bad id; drop' } },
  { call: 'runs.measured', input: { hashes: ['not-a-hash'] } },
  { call: 'runs.list', input: { limit: 0 } },
  { call: 'runs.sweepStart', input: { query: '', seeds: 0, policy: { kind: 'solution' } } },
  { call: 'runs.sweepStart', input: { query: '', seeds: 1, policy: { kind: 'model', baseUrl: 'file:///etc/passwd', model: 'm' } } },
  { call: 'design.preview', input: { skills: ['Juggling'] } },
  { call: 'design.preview', input: { skills: ['Logical Deduction'], template: 'Write a {{game_name}}.' } },
  { call: 'design.start', input: { skills: [], designer: { baseUrl: 'http://127.0.0.1:1/v1', model: 'm' }, agent: null } },
  { call: 'design.get', input: { id: 'bad id; drop' } },
  { call: 'models.ping', input: { endpoint: { baseUrl: 'file:///etc/passwd', model: 'm' } } },
  { call: 'models.ping', input: { endpoint: { baseUrl: 'http://gpu-node-7:30000/v1', model: 'm', via: { jobId: 'no-such-job' } } } },
  { call: 'models.ping', input: { endpoint: { baseUrl: 'http://gpu-node-7:30000/v1', model: 'm', via: { jobId: 'j; rm -rf /' } } } },
  { call: 'editor.draftSave', input: { envId: 1, baseHash: 'abc', source: 'x' } },
  { call: 'editor.create', input: { source: 'x = 1', origin: 'mail' } },  { call: 'runtime.open', input: { source: 'x', versionHash: 'a'.repeat(64) } },
  { call: 'runtime.open', input: {} },
  { call: 'runtime.play', input: { sessionId: 'rs-1', actions: [1] } },
];
