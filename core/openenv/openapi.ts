/**
 * GET /openapi.json: the routes this server answers, in OpenAPI 3.1. `openenv validate --url` reads
 * `info.version` (a 1.x version is the "openenv-http/1.x" profile) and which of /reset, /step and
 * /state are listed (all three: simulation mode) from it (openenv/cli/_validation.py).
 */
import { ACTION_JSON_SCHEMA, OBSERVATION_JSON_SCHEMA, STATE_JSON_SCHEMA } from './wire';

const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const answer = (description: string, schema: unknown = { type: 'object' }) => ({ description, ...json(schema) });
const stepResult = { type: 'object', properties: { observation: OBSERVATION_JSON_SCHEMA, reward: { anyOf: [{ type: 'number' }, { type: 'null' }] }, done: { type: 'boolean' } }, required: ['observation', 'done'] };

export function openApiDocument(version: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'SPADE Workbench OpenEnv server', version: '1.0.0', description: `SPADE games from the workbench library over OpenEnv's protocol (spade-workbench ${version}). Episodes are played over the /ws WebSocket, one environment instance per connection.` },
    paths: {
      '/reset': { post: { tags: ['Environment Control'], summary: 'Reset the environment (stateless: a fresh instance, closed afterwards)', requestBody: { required: false, ...json({ type: 'object', properties: { seed: { type: 'integer', minimum: 0 }, episode_id: { type: 'string', maxLength: 255 }, task_id: { anyOf: [{ type: 'string' }, { type: 'integer' }] }, env: { type: 'string' }, hint: { type: 'boolean' } }, additionalProperties: true }) }, responses: { 200: answer('The first observation', stepResult), 422: answer('Validation error') } } },
      '/step': { post: { tags: ['Environment Control'], summary: 'Execute an action (HTTP keeps no episode: play over /ws)', requestBody: { required: true, ...json({ type: 'object', properties: { action: ACTION_JSON_SCHEMA, timeout_s: { type: 'number' }, request_id: { type: 'string' } }, required: ['action'] }) }, responses: { 200: answer('The observation', stepResult), 409: answer('No episode to step over HTTP'), 422: answer('Validation error') } } },
      '/state': { get: { tags: ['State Management'], summary: 'Current state of a fresh instance', responses: { 200: answer('State', STATE_JSON_SCHEMA) } } },
      '/metadata': { get: { tags: ['Environment Info'], summary: 'Environment metadata', responses: { 200: answer('Name, description, version') } } },
      '/health': { get: { tags: ['Health'], summary: 'Health check', responses: { 200: answer('{"status": "healthy"}') } } },
      '/schema': { get: { tags: ['Schema'], summary: 'Action, observation and state JSON schemas', responses: { 200: answer('Schemas') } } },
      '/mcp': { post: { tags: ['MCP'], summary: 'JSON-RPC 2.0 (SPADE games expose no MCP tools)', responses: { 200: answer('A JSON-RPC response') } } },
      '/tasks': { get: { tags: ['Task API'], summary: 'The task list: each environment version, seed and hint arm served', responses: { 200: answer('Tasks') } } },
    },
  };
}
