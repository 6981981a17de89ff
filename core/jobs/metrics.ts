/**
 * The job side of SPADE's metric lines: the parser itself lives in core/api/spadeMetrics.ts so the
 * renderer's log view and the CLI read a line exactly as the engine does.
 */
export { parseMetricLine, parseRegretLine, parseLogText, metricsJson, type GameReturns, type MetricPoint } from '../api/spadeMetrics';
