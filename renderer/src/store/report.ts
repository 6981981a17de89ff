import { create } from 'zustand';
import { errorMessage } from '../../../core/api';
import { log } from './app';

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
 * Runs a call for code outside a component (store actions, commands): its value, or undefined after
 * the failure was reported. Views with their own busy/error line use useCall instead.
 */
export async function attempt<T>(source: string, label: string, fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await fn();
  } catch (e) {
    reportFailure(source, label, e);
    return undefined;
  }
}
