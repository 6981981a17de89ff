import { Fragment, useEffect, useRef, useState } from 'react';
import type { DesignGame, DesignProgress, DesignRound } from '../../../../core/api/calls/design';
import { backend } from '../../store/app';
import { attempt } from '../../store/report';
import { CodeEditor } from '../../monaco/CodeEditor';
import { openEnvironment } from '../library/open';
import { openEditor } from '../editor/open';
import { openRuns } from '../runs/open';
import { PlateauChart, type PlateauPoint } from './PlateauChart';
import { BlendCell, BlendHeader } from './BlendCell';
import { runOnText } from '../../components/RunOnPicker';
import { Visible } from '../../components/Visible';
import { GroundingDocument, PromptsLine, SystemSent } from './Grounding';
import { RoundMode, VerdictPanel } from './Acceptance';

type Attempt = DesignGame['attempts'][number];

const fmt = (x: number | null | undefined, d = 2) => (x === null || x === undefined ? '–' : x.toFixed(d));
const secs = (ms: number) => (ms >= 10_000 ? `${Math.round(ms / 1000)} s` : `${(ms / 1000).toFixed(1)} s`);
const tokens = (g: DesignGame) => g.attempts.reduce((n, a) => n + (a.tokens.completion ?? 0), 0);
/** The game's class name (what the library calls it), from its accepted program. */
const gameName = (g: DesignGame) => g.attempts.at(-1)?.code.match(/^class\s+(\w+)/m)?.[1] ?? `game ${g.idx + 1}`;
const time = (g: DesignGame) => g.attempts.reduce((n, a) => n + a.ms, 0);

function progressText(p: DesignProgress): string {
  return `game ${p.game} of ${p.games} (${p.skill}) · attempt ${p.attempt} of ${p.of} · ${p.stage}${p.tokensPerSec !== null ? ` · ${p.tokensPerSec.toFixed(1)} tokens/s` : ''}`;
}

/** One round: where it is (with Cancel), its games and attempts, and where its games landed. */
export function RoundView({ id, parentEnvId }: { id: string; parentEnvId: number | null }) {
  const [round, setRound] = useState<DesignRound | null>(null);
  const [progress, setProgress] = useState<DesignProgress | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState<{ game: number; n: number } | null>(null);
  const [cancelling, setCancelling] = useState(false);
  const top = useRef<HTMLElement>(null);
  const shownFor = useRef<string | null>(null);
  useEffect(() => {
    // A round just picked or started is below the form: bring it into view once, when it first shows.
    if (round && shownFor.current !== round.id) {
      shownFor.current = round.id;
      top.current?.scrollIntoView({ block: 'start' });
    }
  }, [round]);
  useEffect(() => {
    let alive = true;
    setRound(null);
    setOpen(null);
    setCancelling(false);
    const load = () =>
      void attempt('design', 'Design round', () => backend().call('design.get', { id }), { show: setError, current: () => alive }).then((r) => {
        if (!r || !alive) return;
        setRound(r);
        setProgress(r.progress);
        setError(null);
      });
    load();
    const offChanged = backend().on('design.changed', (e) => e.roundId === id && load());
    const offProgress = backend().on('design.progress', (p) => p.roundId === id && setProgress(p));
    return () => {
      alive = false;
      offChanged();
      offProgress();
    };
  }, [id]);
  if (error) return <div className="ep-error">{error}</div>;
  if (!round) return <p className="muted">Loading the round…</p>;
  const count = (round.config.count as number | undefined) ?? round.games.length;
  const finished = round.games.filter((g) => g.attempts.length && (g.accepted || g.attempts.length >= ((round.config.attempts as number | undefined) ?? 1))).length;
  const agent = (round.config.extra as { agent?: { model: string } | null } | undefined)?.agent;
  const designer = (round.config.extra as { designer?: { model: string } } | undefined)?.designer;
  const { checksOn, playsOn } = (round.config.extra as { checksOn?: string; playsOn?: string | null } | undefined) ?? {};
  // SPADE's blend reads the plateau at the mean unhinted reward (its win_rate), so that is the x here.
  const points: PlateauPoint[] = round.games.flatMap((g) =>
    g.spade_blend ? [{ n: g.idx + 1, label: `game ${g.idx + 1} · ${gameName(g)}`, x: g.spade_blend.mean_reward, regret: g.spade_blend.regret, blend: g.spade_blend.blend, masked: g.spade_blend.masked }] : [],
  );
  const shown = open ? round.games.find((g) => g.idx === open.game)?.attempts.find((a) => a.n === open.n) : undefined;
  const shownGame = open ? round.games.find((g) => g.idx === open.game) : undefined;
  return (
    <section className="design-round" data-testid="design-round" data-status={round.status} ref={top}>
      <h3>
        Round {round.seq} <span className={`design-status design-status-${round.status}`}>{round.status}</span>{' '}
        <span className="muted">
          {designer ? `designer ${designer.model}` : ''}
          {agent ? ` · agent ${agent.model}` : ' · not played'}
          {checksOn && checksOn !== 'local' ? <span data-testid="design-checks-on-label"> · {playsOn === checksOn ? 'checks and plays' : 'checks'} on {runOnText(checksOn)}</span> : null} · {round.startedAt.slice(0, 16).replace('T', ' ')}
        </span>
      </h3>
      <RoundMode round={round} />
      <PromptsLine config={round.config} />
      {round.error ? <div className="ep-error">{round.error}</div> : null}
      {round.live ? (
        <div className="design-progress" data-testid="design-progress">
          <progress max={count} value={Math.min(count, finished)} aria-label="games done" />
          <span data-testid="design-progress-text">{progress ? progressText(progress) : 'starting…'}</span>
          <button
            onClick={() => {
              setCancelling(true);
              void attempt('design', 'Cancel the round', () => backend().call('design.cancel', { id }), { show: setError });
            }}
            disabled={cancelling}
            data-testid="design-cancel"
          >
            {cancelling ? 'Cancelling…' : 'Cancel'}
          </button>
        </div>
      ) : round.elsewhere ? (
        <div className="muted" data-testid="design-elsewhere">
          Running in {round.elsewhere} (the command line on this data folder): its attempts appear here as it stores them; stop it there.
        </div>
      ) : null}
      {parentEnvId !== null ? <ParentLine envId={parentEnvId} /> : null}
      <div className="design-results">
        <div className="design-table-wrap">
        <table className="design-table" data-testid="design-games">
          <thead>
            <tr>
              <th>game</th>
              <th>skill</th>
              <th>result</th>
              {/* The designer's reward first: at 1024 px the later columns scroll. */}
              <BlendHeader />
              <th className="num" title="Mean unhinted reward: SPADE's win_rate, where its plateau is read">
                mean R
              </th>
              <th className="num">regret</th>
              <th className="num" title="The workbench's win rate: the share of unhinted plays whose return is above 0 (not SPADE's win_rate, which is the mean reward)">
                win rate
              </th>
              <th className="num">tokens</th>
              <th className="num">time</th>
              <th>class</th>
              <th>episodes</th>
            </tr>
          </thead>
          <tbody>
            {round.games.map((g) => (
              <Fragment key={g.idx}>
                <tr data-testid="design-game" data-accepted={g.accepted}>
                  <td>{g.idx + 1}</td>
                  <td className="design-cell-skills">{g.skill}</td>
                  <td className="design-cell-result">
                    {g.accepted ? (
                      <>
                        <span className="design-ok">accepted</span>{' '}
                        {g.env_id !== null ? (
                          <button className="link" onClick={() => openEnvironment(g.env_id!, gameName(g))} data-testid="design-game-env">
                            #{g.env_id}
                          </button>
                        ) : null}
                        {g.play_error ? <span className="muted" title={g.play_error}> · not played: {g.play_error}</span> : null}
                      </>
                    ) : g.attempts.length ? (
                      <span className="design-bad" title={g.attempts.at(-1)?.rejected_because ?? undefined}>
                        rejected: {g.attempts.at(-1)?.rejected_because ?? '–'}
                      </span>
                    ) : (
                      <span className="muted">designing…</span>
                    )}
                  </td>
                  <BlendCell blend={g.spade_blend} played={g.accepted} />
                  <td className="num" data-testid="design-game-mean">
                    {fmt(g.r_no_hint)}
                  </td>
                  <td className="num" data-testid="design-game-regret">
                    {fmt(g.regret, 3)}
                  </td>
                  <td className="num">{fmt(g.win_rate)}</td>
                  <td className="num">{tokens(g) || '–'}</td>
                  <td className="num">{secs(time(g))}</td>
                  <td>{g.class ?? '–'}</td>
                  <td>
                    {g.run_id ? (
                      <button className="link" onClick={() => openRuns(g.run_id)} title="The run record of this game's play (Runs page)">
                        run
                      </button>
                    ) : (
                      '–'
                    )}
                  </td>
                </tr>
                <tr className="design-attempts-row">
                  <td />
                  <td colSpan={10}>
                    {g.attempts.map((a) => (
                      <button
                        key={a.n}
                        className={`design-attempt ${a.rejected_because ? 'rejected' : 'ok'} ${open?.game === g.idx && open.n === a.n ? 'open' : ''}`}
                        onClick={() => setOpen(open?.game === g.idx && open.n === a.n ? null : { game: g.idx, n: a.n })}
                        title={a.rejected_because ?? 'accepted'}
                        data-testid="design-attempt"
                      >
                        attempt {a.n} {a.rejected_because ? '✗' : '✓'}
                      </button>
                    ))}
                  </td>
                </tr>
              </Fragment>
            ))}
          </tbody>
        </table>
        </div>
        <PlateauChart points={points} games={round.games.length} />
      </div>
      {shown && shownGame ? <AttemptDetail a={shown} game={shownGame} /> : null}
    </section>
  );
}

function AttemptDetail({ a, game }: { a: Attempt; game: DesignGame }) {
  const accepted = !a.rejected_because && game.accepted && game.env_id !== null;
  const box = useRef<HTMLElement>(null);
  useEffect(() => {
    // Opened below the table: bring it into view, or a click would seem to do nothing.
    box.current?.scrollIntoView({ block: 'nearest' });
  }, [game.idx, a.n]);
  return (
    <section className="design-attempt-detail" data-testid="design-attempt-detail" ref={box}>
      <h4>
        Game {game.idx + 1}, attempt {a.n} <span className="muted">· {a.model} · {a.tokens.completion ?? '–'} tokens · {secs(a.ms)}</span>
        {accepted ? (
          <>
            {' '}
            <button onClick={() => openEditor(game.env_id!, gameName(game))} data-testid="design-open-editor">
              Open in editor
            </button>
          </>
        ) : null}
        {game.run_id ? (
          <>
            {' '}
            <button onClick={() => openRuns(game.run_id)}>Episodes</button>
          </>
        ) : null}
      </h4>
      {a.rejected_because ? <div className="design-bad">Rejected: {a.rejected_because}</div> : <div className="design-ok" data-testid="design-accepted">Accepted{game.hint ? <>; hint: <Visible text={game.hint} /></> : game.hint_error ? `; no hint (${game.hint_error})` : ''}</div>}
      {accepted && game.hint_leak ? (
        <div className={`design-verdict-${game.hint_leak.status}`} data-testid="design-hint-leak" title="The workbench's hint-leak check of the hint written after acceptance; not part of SPADE's verdict">
          <span className="mono">hint-leak</span> {game.hint_leak.status}: {game.hint_leak.message}
        </div>
      ) : null}
      {a.error ? <div className="ep-error">{a.error}</div> : null}
      {a.acceptance ? <VerdictPanel v={a.acceptance} /> : null}
      <div className={`design-detail-grid${a.document ? ' grounded' : ''}`}>
        {a.document ? <GroundingDocument doc={a.document} /> : null}
        <div className="design-code">
          {a.code ? <CodeEditor key={`${game.idx}:${a.n}`} value={a.code} readOnly ariaLabel={`Program of game ${game.idx + 1}, attempt ${a.n}`} /> : <p className="muted">No program: the designer did not answer.</p>}
        </div>
        <div className="design-verdicts">
          <h5>Audit</h5>
          {a.verdicts.length ? (
            <ul data-testid="design-verdicts">
              {/* The program was audited before its hint existed: hint-leak shows the later check of the hint. */}
              {a.verdicts
                .map((v) => (accepted && game.hint_leak && v.id === 'hint-leak' ? { ...v, ...game.hint_leak, later: true } : { ...v, later: false }))
                .map((v) => (
                  <li key={v.id} className={`design-verdict-${v.status}`} title={v.message}>
                    <span className="mono">{v.id}</span> {v.status}
                    {v.later ? <span className="muted"> (once the hint was written)</span> : null}
                    {v.status !== 'pass' && v.message ? <div className="muted">{v.message}</div> : null}
                  </li>
                ))}
            </ul>
          ) : (
            <p className="muted">Not checked.</p>
          )}
          <SystemSent a={a} />
          <details>
            <summary>Prompt sent</summary>
            <pre className="design-prompt mono">{a.prompt}</pre>
          </details>
          <details>
            <summary>Answer</summary>
            <pre className="design-prompt mono">{a.answer || '(none)'}</pre>
          </details>
        </div>
      </div>
    </section>
  );
}

/** The parent of a variants round, with its numbers, so the variants' regret has something to stand beside. */
function ParentLine({ envId }: { envId: number }) {
  const [p, setP] = useState<{ name: string; recorded: number | null; measured: { regret: number | null; model: string } | null } | null>(null);
  useEffect(() => {
    let alive = true;
    // The parent's line is a detail: unknown, it is left out.
    void attempt(
      'design',
      'Parent regret',
      async () => {
        const e = await backend().call('memory.get', { id: envId });
        const m = (await backend().call('runs.measured', { hashes: [e.hash] })).find((x) => x.regret !== null) ?? null;
        if (alive) setP({ name: e.name, recorded: e.regret, measured: m ? { regret: m.regret, model: m.model } : null });
      },
      { quiet: 'warn' },
    );
    return () => {
      alive = false;
    };
  }, [envId]);
  if (!p) return null;
  return (
    <div className="design-parent" data-testid="design-parent">
      Parent{' '}
      <button className="link" onClick={() => openEnvironment(envId, p.name)}>
        {p.name}
      </button>
      : regret {p.measured ? `${fmt(p.measured.regret, 3)} (measured, ${p.measured.model})` : 'not measured'}
      {p.recorded !== null ? ` · ${fmt(p.recorded, 3)} recorded by training` : ''}
    </div>
  );
}
