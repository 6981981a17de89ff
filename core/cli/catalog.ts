import type { Command } from './command';

/**
 * What `--help` lists, without loading any command: each command's module (and the SQLite,
 * Pyodide, SSH... code behind it) is imported only when that command runs, so `--help`,
 * `--version` and a usage error start as fast as Node itself.
 */
export interface CommandInfo {
  name: string;
  summary: string;
  usage: string;
  load(): Promise<Command>;
}

export const catalog: CommandInfo[] = [
  {
    name: 'serve',
    summary: 'Serve the workbench UI and API on 127.0.0.1 (open the printed URL in a browser)',
    usage: 'spade-workbench serve [--port N] [--data-dir DIR] [--host ADDR [--token T]]',
    load: async () => (await import('./commands/serve')).serveCommand,
  },
  {
    name: 'serve-env',
    summary: "Serve library environments over OpenEnv's protocol (HTTP routes and /ws sessions), each session in the sandbox and recorded as an episode",
    usage:
      'spade-workbench serve-env (--selection QUERY | ENV_ID...) [--port P] [--hint on|off|both] [--max-turns N] [--concurrency K]\n' +
      '       [--seeds N] [--seed-start S] [--runtime auto|pyodide|cpython] [--host ADDR [--token T]] [--data-dir DIR] [--json]\n' +
      '  ENV_ID: a library id or a version hash (8+ hex characters). Binds 127.0.0.1:8000 unless told otherwise; any other --host needs the token.',
    load: async () => (await import('./commands/serveEnv')).serveEnvCommand,
  },
  {
    name: 'openenv-play',
    summary: 'Play an environment another OpenEnv server serves (a URL): given actions, or a model as a model run',
    usage:
      'spade-workbench openenv-play --url URL [--seed S] [--hint] [--max-turns N] [--env NAME|HASH] [--actions FILE] [--json]\n' +
      '       spade-workbench openenv-play --url URL --endpoint URL|local [--model NAME] [--seeds N] [--seed-start S] [--hint on|off|both] [--max-turns N] [--data-dir DIR] [--json]\n' +
      "  FILE: one action text per line (JSON strings allowed). With --endpoint, the model plays each seed and the run is stored like any model run. --hint only where the server has one (serve-env's).",
    load: async () => (await import('./commands/openenvClient')).openenvPlayCommand,
  },
  {
    name: 'openenv-audit',
    summary: "Audit an environment another OpenEnv server serves, over the wire: the wire.* checks (determinism, seed use, malformed actions, reward range), not SPADE's audit",
    usage: 'spade-workbench openenv-audit --url URL [--seeds 0,1,2,3] [--actions FILE] [--max-turns N] [--reward-range LO,HI] [--env NAME|HASH] [--data-dir DIR] [--json]',
    load: async () => (await import('./commands/openenvClient')).openenvAuditCommand,
  },
  {
    name: 'train',
    summary: "Train a model locally with GRPO (TRL + PEFT LoRA, in the training venv) on library environments served over OpenEnv's protocol, then evaluate base and checkpoint as model runs on held-back seeds",
    usage:
      'spade-workbench train --selection QUERY [--steps N] [--group-size G] [--prompts-per-step P] [--lora-rank R] [--lr LR] [--max-turns T]\n' +
      '       [--hint-share S] [--max-new-tokens M] [--model NAME|DIR|FILE.gguf] [--train-seeds N] [--eval-seeds N] [--boxed-reward W] [--out DIR]\n' +
      '       [--save-every N] [--no-eval | --evaluate ADAPTER_DIR] [--runtime auto|pyodide|cpython] [--train-venv DIR] [--data-dir DIR]\n' +
      '  --evaluate plays base and a saved adapter (adapter-final or checkpoint-N) on the held-back seeds, without training.\n' +
      '  Default model: the embedded SmolLM2-135M-Instruct GGUF. CUDA when present, else CPU. The training venv is made on first use\n' +
      '  (~/.cache/spade-workbench/train-venv, or SPADE_WORKBENCH_TRAIN_VENV). --boxed-reward is an option beside SPADE\'s return (default 0).',
    load: async () => (await import('./commands/train')).trainCommand,
  },
  {
    name: 'import',
    summary: 'Import environments from SPADE folders, pools, tool-use releases, env_memory.json or JSONL',
    usage: 'spade-workbench import PATH... [--data-dir DIR] [--run ID] [--follow-links] [--json] [--quiet]',
    load: async () => (await import('./commands/import')).importCommand,
  },
  {
    name: 'export',
    summary: "Export seeds, a tag, a search or everything in SPADE's layout or as JSONL",
    usage: 'spade-workbench export (--seeds | --tag T | --query Q | --all) [--format spade|jsonl] [--model M] OUT [--data-dir DIR] [--json]   (--model: whose measured win rate and regret env_memory.json carries, and the spade_blend of manifest.jsonl / environments.jsonl; default the newest)',
    load: async () => (await import('./commands/export')).exportCommand,
  },
  {
    name: 'search',
    summary: 'Full-text search of the environment library (code, hint, notes, class name)',
    usage: 'spade-workbench search QUERY [--kind game|tool-use] [--skill S] [--tag T] [--seeds] [--rejected] [--model M] [--frontier] [--sort regret|win-rate|difficulty|blend|model] [--limit N] [--data-dir DIR] [--json]',
    load: async () => (await import('./commands/search')).searchCommand,
  },
  {
    name: 'stats',
    summary: 'Totals of the environment library (by kind and skill, seeds, rejected, size)',
    usage: 'spade-workbench stats [--data-dir DIR] [--json]',
    load: async () => (await import('./commands/stats')).statsCommand,
  },
  {
    name: 'audit',
    summary: "Audit environments: SPADE's load checks plus determinism, leaks, crashes, types, winnability, hint leaks",
    usage: 'spade-workbench audit PATH|--all [--checks ids] [--format json|md|table] [--out FILE] [--fail-on fail|warn] [--workers N] [--max-turns N] [--call-timeout S] [--runtime cpython|pyodide] [--data-dir DIR]\n       spade-workbench audit --pool QUERY [--on local|ray://HOST:PORT|slurm:HOST] [--json] [--shard-size N] [--python PATH] [--ray-python PATH] [--ssh-key F] [--known-hosts F]\n       spade-workbench audit --resume SWEEP_ID | --cancel SWEEP_ID',
    load: async () => (await import('./commands/audit')).auditCommand,
  },
  {
    name: 'replay',
    summary: 'Play an environment with a seed and an action script (with/without hint), or replay recorded episodes and trajectories; exits 1 on divergence',
    usage:
      'spade-workbench replay ENV.py --seed N [--actions FILE] [--hint TEXT|--hint-file F] [--compare-hint] [--max-turns N] [--runtime auto|pyodide|cpython] [--data-dir DIR] [--json]\n' +
      '       spade-workbench replay EPISODE.jsonl [--env ENV.py] [--seed-search N] [--data-dir DIR] [--json]',
    load: async () => (await import('./commands/replay')).replayCommand,
  },
  {
    name: 'play',
    summary: "Play environments with a served model (OpenAI-compatible) or the embedded local one, with and without the hint, by SPADE's agent protocol; prints returns and regret",
    usage:
      'spade-workbench play ENV.py|--selection QUERY --endpoint URL --model NAME [--api-key-env VAR] --seeds N [--seed-start S]\n' +
      '       spade-workbench play ENV.py|--selection QUERY --endpoint local [--model NAME|FILE.gguf] --seeds N ...   (the embedded model; default SmolLM2-135M-Instruct)\n' +
      '       [--hint TEXT|--hint-file F] [--compare-hint] [--concurrency K] [--temperature T] [--top-p P] [--top-k K|none] [--max-tokens M]\n' +
      '       [--thinking] [--stream] [--max-turns N] [--timeout SEC] [--retries N] [--runtime auto|pyodide|cpython] [--data-dir DIR] [--json]\n' +
      '       [--via-job JOB_ID]   (the endpoint as that job\'s SSH host sees it, e.g. http://gpu-node-7:30000/v1; requests go through its SSH connection)',
    load: async () => (await import('./commands/play')).playCommand,
  },
  {
    name: 'regret',
    summary: "SPADE's hint-based regret of a scripted policy or a served model over a library pool, as a sweep here, on a Ray cluster or as a Slurm job array; resumable, kept as a model run",
    usage:
      'spade-workbench regret --pool QUERY [--estimator spade|paired] [--policy solution|random[:SEED]|script:FILE] [--no-extract] [--max-turns N]\n' +
      "         (SPADE's estimator by default: [--hint-plays N] [--nohint-plays N] [--hash-seed N] [--arm-thinking both|spade-8b]; --estimator paired: --seeds N [--seed-start S])\n" +
      '       [--on local|ray://HOST:PORT|slurm:HOST] [--concurrency K] [--step-timeout SEC] [--shard-size N] [--python PATH] [--ray-python PATH]\n' +
      '       [--ssh-key F] [--known-hosts F] [--data-dir DIR] [--json] [--quiet]\n' +
      '       [--endpoint URL --model NAME [--api-key-env VAR] [--temperature T] [--top-p P] [--top-k K|none] [--max-tokens M] [--thinking] [--timeout SEC] [--retries N]]\n' +
      '         (a served model instead of --policy, reached from where the episodes play; VAR is read there)\n' +
      '       spade-workbench regret --resume SWEEP_ID | --cancel SWEEP_ID   (the same command again resumes too)',
    load: async () => (await import('./commands/regret')).regretCommand,
  },
  {
    name: 'design',
    summary: "Run a small SPADE design round: a designer model writes environments from memory seeds, SPADE's checks and the audit judge each attempt, accepted games get a hint, are played and enter memory with their parents",
    usage:
      'spade-workbench design --skills "A" ["B" ...] [--count N] [--difficulty easy|medium|hard] [--designer URL|local] [--designer-model NAME]\n' +
      '       [--preset spade-games|spade-tool-use|quick] [--gate spade|workbench]\n' +
      '       [--agent URL|local] [--agent-model NAME] [--attempts K] [--feedback repair|spade] [--seeds-from QUERY] [--pin ID]... [--ban ID]...\n' +
      "       [--estimator spade|paired] (SPADE's: [--hint-plays N] [--nohint-plays N] [--hash-seed N] [--arm-thinking both|spade-8b]; paired: --play-seeds N)\n" +
      '       [--spade-src DIR [--corpus FILE [--corpus-max-words N]] [--tool-use-prompt multiturn|single]]\n' +
      '       [--template FILE] [--play-seeds N] [--max-turns N] [--max-tokens M] [--agent-max-tokens M] [--seed S] [--out DIR] [--data-dir DIR] [--json]\n' +
      '       [--on local|ray://HOST:PORT|slurm:HOST [--python PATH] [--ray-python PATH] [--ssh-key FILE] [--known-hosts FILE]]\n' +
      '  Served endpoints read their API key from SPADE_DESIGNER_API_KEY / SPADE_AGENT_API_KEY.\n' +
      "  --spade-src: a SPADE checkout; its designer system prompt, prompt builders, skill descriptions and hint prompts are read from it at run time\n" +
      "  (default: the Settings field; without one, the workbench's own template). --corpus: SPADE's CORPUS_FILE (JSONL, orig_doc or text), one document per attempt.\n" +
      "  --on: where each attempt's checks run (as `audit --pool --on` runs them); the designer and agent are called from here.\n" +
      "  --preset: SPADE paper defaults (spade-games: cmd/games/train_spade_8b.sh, the default; spade-tool-use: cmd/tool_use/train_spade_8b.sh) or quick (the earlier laptop defaults); flags override its values.\n" +
      "  --gate: spade (default) keeps what SPADE's trainer keeps (validate_game, then the recipe's reset gate and LLM validator); the random-guess test\n" +
      "          and the workbench's checks are advice. workbench: reject on those too.",
    load: async () => (await import('./commands/design')).designCommand,
  },
  {
    name: 'runs',
    summary: 'Model runs kept in the library: list them, show one (per environment: regret, win rate, failed episodes), compare two',
    usage:
      'spade-workbench runs list [--model M] [--env HASH] [--selection Q] [--status S] [--since ISO_DATE] [--limit N] [--data-dir DIR] [--json]\n' +
      '       spade-workbench runs show RUN_ID [--data-dir DIR] [--json]\n' +
      '       spade-workbench runs compare RUN_A RUN_B [--data-dir DIR] [--json]   (per environment: both measurements and B - A)',
    load: async () => (await import('./commands/runs')).runsCommand,
  },
  {
    name: 'jobs',
    summary: "Training jobs: launch a recipe, attach, stop, a run's checkpoints and offline evaluation, continue, metrics (or a saved log's), list, logs",
    usage:
      'spade-workbench jobs launch RECIPE [--on local|ssh:HOST|slurm:HOST|ray://HOST:PORT] [--env K=V ...] [--name N] [--workdir DIR] [--follow] [--json]\n' +
      '         (HOST: [user@]host[:port], an ~/.ssh/config alias or a host a job used; --ssh-key FILE, --known-hosts FILE;\n' +
      '          slurm: --container SIF --partition P --gpus N --time T; the recipe\'s secrets are read from this command\'s environment)\n' +
      '       spade-workbench jobs attach ID --on slurm:HOST|ray://HOST:PORT [--ssh HOST] [--output-dir DIR] [--name N] [--follow]\n' +
      '       spade-workbench jobs stop ID [--yes]   (--yes: a job attached to, not launched here, is someone\'s)\n' +
      '       spade-workbench jobs artefacts ID [--json]   (checkpoints by step, eval_offline results.json per checkpoint)\n' +
      '       spade-workbench jobs continue ID [--load SAVE_DIR] [--follow]   (the recipe again with LOAD_DIR, where its script reads it)\n' +
      '       spade-workbench jobs metrics --log FILE|- [--json]   (a saved SPADE/Slime log or metrics.jsonl; - reads stdin)\n' +
      '       spade-workbench jobs metrics ID [--data-dir DIR] [--json]\n' +
      '       spade-workbench jobs list [--data-dir DIR] [--json]\n' +
      '       spade-workbench jobs logs ID [--follow] [--data-dir DIR]\n' +
      '  --json prints {"series": {KEY: [[x, value], ...]}, "axis": {KEY: AXIS_KEY}, "games": [{"game", "r_hint", "r_no_hint", "regret"}]}',
    load: async () => (await import('./commands/jobs')).jobsCommand,
  },
];

/** A command module's name, summary and usage, from the catalog (one place for the text). */
export function commandInfo(name: string): Pick<Command, 'name' | 'summary' | 'usage'> {
  const c = catalog.find((x) => x.name === name);
  if (!c) throw new Error(`No command ${name} in the CLI catalog`);
  return { name: c.name, summary: c.summary, usage: c.usage };
}
