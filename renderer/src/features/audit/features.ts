import { viewFor } from '../../views/registry';

/** The replay button only shows where the episodes feature is registered. */
export function episodesAvailable(): boolean {
  return viewFor('episode') !== undefined;
}
