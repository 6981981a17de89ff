/** SPADE's skill names (docs/spade-formats.md section 6), shared by the engine and the UI. */
export const COGNITIVE_SKILLS = [
  'Pattern Recognition',
  'Logical Deduction',
  'Strategic Planning',
  'Mathematical Reasoning',
  'Spatial Reasoning',
  'Causal Inference',
  'Memory Recall',
  'Optimization',
  'Language Understanding',
] as const;

export const TOOL_USE_SKILLS = [
  'API Orchestration',
  'Data Retrieval',
  'State Modification',
  'Error Recovery',
  'Tool Selection',
  'Multi-Step Workflows',
] as const;

export const ALL_SKILLS: readonly string[] = [...COGNITIVE_SKILLS, ...TOOL_USE_SKILLS];
