import { useCallback, useEffect, useRef, useState } from 'react';
import type { CallInput, CallOutput } from '../../../../core/api';
import type { EpisodeSummary, StepDetail, StepView } from '../../../../core/api/calls/episodes';
import { backend } from '../../store/app';
import { attempt } from '../../store/report';
import { useCall } from '../../store/useCall';
import { storedEndpoint } from '../../store/savedEndpoint';

export type RunInput = Omit<CallInput<'episodes.run'>, 'id'>;

/** Work on the episode that reaches its interpreter (a step, a run, a replay): shown with Cancel while it waits. */
export interface EpisodeWork {
  label: string;
  startedAt: number;
  /** Reopening a recording re-executes its steps first (the episode was not live). */
  detail?: string;
  cancelling: boolean;
}

let nextRequest = 1;

export interface EpisodeController {
  id: number;
  episode: EpisodeSummary | null;
  steps: StepView[];
  idx: number;
  detail: StepDetail | null;
  busy: boolean;
  /** What the interpreter is doing for this view right now, or null. */
  work: EpisodeWork | null;
  /** Stops the work in the engine (episodes.cancel): its interpreter stopped, nothing more recorded. */
  cancel(): void;
  error: string | null;
  note: string | null;
  /** Milliseconds of the last step round trip (the UI's own measure, shown in the header). */
  lastStepMs: number | null;
  select(idx: number): Promise<void>;
  act(action: string): Promise<void>;
  resetAgain(seed?: number | null): Promise<void>;
  run(input: RunInput): Promise<string | null>;
  replay(): Promise<CallOutput<'episodes.replay'> | null>;
  /** One turn of the served model set up in 'Play with a model' (or turns until the episode ends). */
  modelTurn(untilDone: boolean): Promise<string | null>;
  reload(): Promise<void>;
}

/** Holds one episode's timeline and the selected step; every change goes through the contract. */
export function useEpisode(initialId: number, initialIdx = 0): EpisodeController {
  const [id, setId] = useState(initialId);
  const [episode, setEpisode] = useState<EpisodeSummary | null>(null);
  const [steps, setSteps] = useState<StepView[]>([]);
  // Opened from elsewhere (an audit's failing step, say) the view can start at a given step.
  const [idx, setIdx] = useState(initialIdx);
  const [detail, setDetail] = useState<StepDetail | null>(null);
  // The view's busy flag and its one error line.
  const call = useCall('episodes');
  const setError = call.setError;
  const [work, setWork] = useState<EpisodeWork | null>(null);
  const request = useRef<string | null>(null);
  /** Cancel was pressed for the work in progress (work of several calls stops between them too). */
  const cancelAsked = useRef(false);
  const [note, setNote] = useState<string | null>(null);
  const [lastStepMs, setLastStepMs] = useState<number | null>(null);
  const seq = useRef(0);

  useEffect(() => setId(initialId), [initialId]);

  // The view owns its episode's runtime session: when the tab closes (the view unmounts) the
  // session is closed; the recording stays, and opening it again re-executes it if played on.
  const shown = useRef(id);
  shown.current = id;
  useEffect(
    () => () => {
      // The tab is gone: a close that fails has nobody to tell (the engine closes idle sessions itself).
      void attempt('episodes', 'Close the episode', () => backend().call('episodes.close', { id: shown.current }), { quiet: 'warn' });
    },
    [],
  );

  const show = useCallback(async (epId: number, at: number, live: boolean) => {
    const mine = ++seq.current;
    const d = await attempt(
      'episodes',
      `Step ${at}`,
      async () => (live ? (await backend().call('episodes.scrub', { id: epId, idx: at })).detail : await backend().call('episodes.inspect', { id: epId, idx: at })),
      // A step asked for since is the one shown; this one's answer or failure is dropped.
      { show: setError, current: () => mine === seq.current },
    );
    if (d && mine === seq.current) {
      setDetail(d);
      setIdx(at);
    }
  }, [setError]);

  const apply = useCallback(
    async (r: CallOutput<'episodes.get'> & { forkedFrom?: number | null }, jumpToEnd: boolean) => {
      setEpisode(r.episode);
      setSteps(r.steps);
      if (r.forkedFrom) {
        setNote(`Play continued from an earlier step, so it was recorded as a new episode #${r.episode.id} (forked from #${r.forkedFrom}).`);
        setId(r.episode.id);
      }
      const at = jumpToEnd ? r.steps.length - 1 : Math.min(idx, r.steps.length - 1);
      // The live session already stands at the last step: read the detail without moving it.
      await show(r.episode.id, Math.max(0, at), false);
    },
    [idx, show],
  );

  /** A step answer carries only the new steps and their detail: append, no second round trip. */
  const applyStep = useCallback(
    async (r: CallOutput<'episodes.act'>) => {
      if (r.forkedFrom) {
        setNote(`Play continued from an earlier step, so it was recorded as a new episode #${r.episode.id} (forked from #${r.forkedFrom}).`);
        const full = await backend().call('episodes.get', { id: r.episode.id });
        setId(r.episode.id);
        setEpisode(full.episode);
        setSteps(full.steps);
      } else {
        const first = r.steps[0]?.idx ?? 0;
        setEpisode(r.episode);
        setSteps((prev) => [...prev.slice(0, first), ...r.steps]);
      }
      seq.current++;
      setDetail(r.detail);
      setIdx(r.detail.step.idx);
    },
    [],
  );

  const reload = useCallback(async () => {
    const r = await attempt('episodes', 'Read the episode', () => backend().call('episodes.get', { id }), { show: setError });
    if (!r) return;
    setEpisode(r.episode);
    setSteps(r.steps);
    setError(null);
    await show(id, Math.min(idx, Math.max(0, r.steps.length - 1)), false);
  }, [id]);

  useEffect(() => {
    void reload();
  }, [reload]);

  /**
   * `fn` under a request id of its own, so Cancel stops exactly this work in the engine. After a
   * Cancel the recording is read again (steps recorded before it stay) and a note says so.
   */
  const tracked = useCallback(
    async <T,>(label: string, fn: (requestId: string) => Promise<T>, onLiveSession = true): Promise<T | null> => {
      const requestId = `ep-${Date.now().toString(36)}-${nextRequest++}`;
      request.current = requestId;
      cancelAsked.current = false;
      const reopening = onLiveSession && episode && !episode.live && episode.origin === 'played' ? `reopening the recording first (re-executing ${steps.length} steps)` : undefined;
      setWork({ label, startedAt: Date.now(), cancelling: false, ...(reopening ? { detail: reopening } : {}) });
      setNote(null);
      let cancelled = false;
      // Cancel is not a failure: no error line, a note instead (useCall's onCancelled).
      const value = await call.run(label, () => fn(requestId), { onCancelled: () => (cancelled = true) });
      request.current = null;
      setWork(null);
      if (cancelled) {
        setNote(`${label} cancelled: its interpreter was stopped and the episode closed. Steps recorded before Cancel stay; the next step reopens the episode.`);
        await reload();
      }
      return value === undefined ? null : value;
    },
    [episode, steps.length, call.run, reload],
  );

  return {
    id,
    episode,
    steps,
    idx,
    detail,
    busy: call.busy !== null,
    work,
    cancel: () => {
      const requestId = request.current;
      if (!requestId) return;
      cancelAsked.current = true;
      setWork((w) => (w ? { ...w, cancelling: true } : w));
      // A Cancel that cannot reach the engine leaves the work to finish and say so itself.
      void attempt('episodes', 'Cancel', () => backend().call('episodes.cancel', { requestId }), { quiet: 'warn' });
    },
    error: call.error,
    note,
    lastStepMs,
    select: async (at) => {
      if (!episode) return;
      await show(id, at, episode.live);
      if (episode.live) setEpisode({ ...episode, cursor: at });
    },
    act: async (action) => {
      await tracked('Step', async (requestId) => {
        const t0 = performance.now();
        const r = await backend().call('episodes.act', { id, action, requestId });
        await applyStep(r);
        setLastStepMs(performance.now() - t0);
      });
    },
    resetAgain: async (seed) => {
      await tracked('Reset', async (requestId) => applyStep(await backend().call('episodes.resetAgain', { id, requestId, ...(seed !== undefined ? { seed } : {}) })));
    },
    run: async (input) =>
      tracked(`Run until ${input.until?.kind === 'expr' ? 'the state holds' : input.until?.kind === 'steps' ? `${input.until.count} steps` : input.until?.kind === 'reward' ? 'reward > 0' : 'done'}`, async (requestId) => {
        const r = await backend().call('episodes.run', { id, ...input, requestId });
        await apply(r, true);
        return r.stoppedBecause;
      }),
    replay: async () =>
      tracked('Replay & compare', async (requestId) => {
        const r = await backend().call('episodes.replay', { id, requestId });
        await reload();
        return r;
      }, false),
    modelTurn: async (untilDone) => {
      const endpoint = storedEndpoint();
      if (!endpoint) {
        setError("No model endpoint yet: set one in 'Play with a model' (Model… in the Episodes panel)");
        return null;
      }
      return tracked(untilDone ? 'Model: until done' : 'Model turn', async (requestId) => {
        let cur = id;
        for (let n = 0; n < 10_000; n++) {
          // Each turn is its own request: Cancel between two turns stops before the next one.
          if (cancelAsked.current) throw Object.assign(new Error('cancelled'), { code: 'cancelled' });
          const turnId = `${requestId}-${n}`;
          request.current = turnId;
          const r = await backend().call('models.turn', { id: cur, endpoint, requestId: turnId });
          await apply(r, true);
          cur = r.episode.id;
          if (r.ended) return r.ended;
          if (!untilDone) return 'one model turn';
        }
        return 'stopped';
      });
    },
    reload,
  };
}
