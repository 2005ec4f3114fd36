import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { routes } from '../../src/contracts/routes.js';
import { ServiceClient } from '../../src/client/index.js';
import type { Permission } from '../../src/core/permissions.js';
import { createMcpServer } from '../../src/mcp/server.js';
import { defineRoute } from '../define-route.js';
import { InjectTransport } from './inject-transport.js';

/**
 * Opening the endpoint needs a valid key of any role (reader is the lowest): each tool call is
 * then checked against the permission of the REST route it maps to, by that route itself.
 */
const ENTRY_PERMISSION: Permission = 'health';

/**
 * POST /mcp: MCP over Streamable HTTP, stateless (no session id; one MCP server per request,
 * JSON answers, no SSE stream), registered only when SERVICE_MCP=true. Tool calls run through
 * this server's own routes with the caller's Authorization and X-Project-Id.
 */
export function mcpRoutes(server: FastifyInstance, version: string): void {
  // Manual input: the MCP SDK reads the JSON-RPC message and writes the answer itself.
  defineRoute(server, routes.mcp, {
    permission: ENTRY_PERMISSION, input: 'manual',
    tag: 'mcp', summary: 'Model Context Protocol over Streamable HTTP (stateless JSON-RPC; only with SERVICE_MCP=true).',
    description: 'Any valid key opens it; each tool call is checked against the permission of the REST route it maps to.',
    handler: (_input, request, reply) => handleMcpPost(server, version, request, reply),
  });
  // Stateless: there is no server-initiated stream to GET and no session to DELETE; those
  // methods get the server's 405 with `Allow: POST` (server/plugins/errors.ts).
}

async function handleMcpPost(server: FastifyInstance, version: string, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const header = (name: string) => {
    const v = request.headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const client = new ServiceClient({
    url: 'in-process',
    transport: new InjectTransport(server, {
      authorization: header('authorization'),
      projectId: header('x-project-id'),
      ip: request.ip,
      requestId: request.id,
    }),
  });
  const mcp = createMcpServer({ client, version, logError: (err, message) => request.log.error({ err }, message) });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });

  // From here the SDK writes the response itself; Fastify's reply is out of the picture.
  reply.hijack();
  reply.raw.setHeader('x-request-id', request.id);
  reply.raw.on('close', () => {
    void transport.close();
    void mcp.close();
  });
  try {
    await mcp.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  } catch (err) {
    request.log.error({ err }, 'MCP request failed');
    if (!reply.raw.headersSent) {
      reply.raw.writeHead(500, { 'content-type': 'application/json' });
      reply.raw.end(JSON.stringify({ detail: 'internal error', request_id: request.id }));
    }
  }
}
