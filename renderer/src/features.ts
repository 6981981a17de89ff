/**
 * Feature modules (library, editor, episodes, jobs...) register their views, side panels,
 * commands and status items here, so main.tsx stays the same as features arrive.
 */
import { registerLibrary } from './features/library';
import { registerEditorFeature } from './features/editor';
import { registerJobsFeature } from './features/jobs';
import { registerEpisodesFeature } from './features/episodes';
import { registerRunsFeature } from './features/runs';
import { registerRuntimeFeature } from './features/runtime';
import { registerAuditFeature } from './features/audit';
import { registerDesignFeature } from './features/design';
import { registerOpenEnvFeature } from './features/openenv';

export function registerFeatures(): void {
  registerRuntimeFeature();
  registerLibrary();
  registerEditorFeature();
  registerJobsFeature();
  registerEpisodesFeature();
  registerRunsFeature();
  registerAuditFeature();
  registerDesignFeature();
  registerOpenEnvFeature();
}
