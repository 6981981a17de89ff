/**
 * Feature modules (library, editor, episodes, jobs...) register their views, side panels,
 * commands and status items here, so main.tsx stays the same as features arrive.
 */
export function registerFeatures(): void {}
