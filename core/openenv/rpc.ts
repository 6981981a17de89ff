/**
 * POST /mcp (and /ws `mcp` messages): OpenEnv's JSON-RPC 2.0 endpoint (http_server.py mcp_handler).
 * SPADE games expose no MCP tools, so tools/list and tools/call answer as OpenEnv answers for an
 * environment without MCP (INTERNAL_ERROR "Environment does not support MCP"); anything else is
 * "Method not found", and a body that is not a JSON-RPC request gets its parse/invalid-request error.
 * The reply always has status 200 and `jsonrpc: "2.0"`, as OpenEnv's does.
 */
import { errorMessage } from '../api/errorMessage';
import { rpcError, rpcRequestSchema, RPC } from './wire';

export function handleRpc(body: unknown): Record<string, unknown> {
  if (typeof body === 'symbol') return rpcError(RPC.parse);
  const parsed = rpcRequestSchema.safeParse(body);
  if (!parsed.success) return rpcError(RPC.invalidRequest, `Invalid request: ${errorMessage(parsed.error)}`);
  const { method, id } = parsed.data;
  const rid = id ?? null;
  if (method === 'tools/list' || method === 'tools/call') return rpcError(RPC.internal, 'Environment does not support MCP', rid);
  return rpcError(RPC.methodNotFound, `Method not found: ${method}`, rid);
}
