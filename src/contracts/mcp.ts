import { z } from 'zod';

/** POST /mcp: one JSON-RPC 2.0 message in, one out (the MCP SDK reads and writes the rest). */
export const McpMessage = z.object({ jsonrpc: z.literal('2.0') }).passthrough();
