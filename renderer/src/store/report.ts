import { create } from 'zustand';
import { errorMessage } from '../../../core/api';
import { log, type LogLine } from './app';

/**
 * The one place a failed call becomes something a person sees. The text is the engine's own
 * sentence (the dispatcher's DomainError message, never a raw schema dump); it goes to the Logs
 * panel and, for calls no view shows a line for, to the status bar's error notice.
 */
export interface Notice {
  id: number;
  source: string;
  text: string;
}

interface NoticeState {
  notice: Notice | null;
  dismiss(): void;
}

let nextId = 1;
export const useNotice = create<NoticeState>((set) => ({
  notice: null,
  dismiss: () => set({ notice: null }),
}));

/** Logs a failure as `label: message` and returns the message (for a view's own error line). */
export function logFailure(source: string, label: string, e: unknown): string {
  const message = errorMessage(e);
  log('error', source, `${label}: ${message}`);
  return message;
}

/** A failure with no view line of its own: logged, and shown in the status bar until dismissed. */
export function reportFailure(source: string, label: string, e: unknown): string {
  const message = logFailure(source, label, e);
  useNotice.setState({ notice: { id: nextId++, source, text: `${label}: ${message}` } });
  return message;
}

/**
 * The few ways a call's failure is not simply "show it": each is named, so a view asks for one
 * instead of writing its own catch block.
 */
export interface CallOptions {
  /** The view's own error line (useCall's) takes the message; without it, the status bar's notice does. */
  show?: (message: string) => void;
  /**
   * Background work nobody asked for by a click (a status bar poll, an autosave, the syntax check
   * while typing): a failure goes to the Logs panel only, at this level; a notice every few
   * seconds would bury the ones that matter. 'none' for a poll whose own display already says it
   * (the health banner, the runtime item going away): a line every few seconds would flood the Logs.
   */
  quiet?: LogLine['level'] | 'none';
  /** The person's Cancel ended the call (the engine answers code 'cancelled'): not a failure; this runs instead. */
  onCancelled?: () => void;
  /** Puts back an optimistic change (a box that moved at once) before the failure is shown. */
  rollback?: () => void;
  /** False once a newer ask replaced this one: its failure says nothing, the newer answer speaks. */
  current?: () => boolean;
}

/** Whether a thrown value is the engine's answer to a Cancel (DomainError code 'cancelled'). */
export function isCancelled(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'cancelled';
}

/**
 * `fn`, or `instead` when the engine answers it with `code`: a second ask the first one's answer
 * calls for (a trajectory whose game is not in the library binds to the selected one), not a
 * failure to show. Any other failure goes on to the caller's attempt/useCall.
 */
export async function orWhen<T>(code: string, fn: () => Promise<T>, instead: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (typeof e === 'object' && e !== null && (e as { code?: unknown }).code === code) return instead();
    throw e;
  }
}

/** What a failed call does, by its options: the one decision every call's failure goes through. */
export function failed(source: string, label: string, e: unknown, opts: CallOptions = {}): void {
  if (opts.current && !opts.current()) return;
  opts.rollback?.();
  if (opts.onCancelled && isCancelled(e)) {
    log('info', source, `${label}: cancelled`);
    opts.onCancelled();
    return;
  }
  if (opts.quiet === 'none') return;
  if (opts.quiet) log(opts.quiet, source, `${label}: ${errorMessage(e)}`);
  else if (opts.show) opts.show(logFailure(source, label, e));
  else reportFailure(source, label, e);
}

/**
 * Runs a call for code outside a component (store actions, commands, sessions): its value, or
 * undefined after the failure went where `opts` says (by default the status bar). Views with their
 * own busy/error line use useCall, which runs through here.
 */
export async function attempt<T>(source: string, label: string, fn: () => Promise<T>, opts: CallOptions = {}): Promise<T | undefined> {
  try {
    return await fn();
  } catch (e) {
    failed(source, label, e, opts);
    return undefined;
  }
}
