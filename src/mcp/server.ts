import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema, ErrorCode, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, ListToolsRequestSchema,
  McpError, ReadResourceRequestSchema, type CallToolResult, type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { ServiceClient } from '../client/index.js';
import { renderFailure, toolFailureOf, type ToolFailure } from './errors.js';
import { PatternResources } from './resources.js';
import { TOOLS, jsonSchemaOf, type ToolDefinition } from './tools.js';

export interface McpServerOptions {
  /** Every tool call goes through this client (HTTP to a service, or in-process on the server). */
  client: ServiceClient;
  version: string;
  /** Where unexpected errors go (stderr for stdio, the request log for HTTP); never stdout. */
  logError(err: unknown, message: string): void;
  /**
   * Serve recalled patterns as `memory://patterns/{id}` resources. Needs a session that outlives
   * one request (stdio); the stateless HTTP endpoint leaves it off.
   */
  resources?: boolean;
}

const INSTRUCTIONS =
  'Execution memory for coding agents. Before solving a task, call recall with the task to find stored solutions ' +
  '(reuse "duplicate" matches, adapt "adapt" ones). After a solution ran, call learn with the task, the code and ' +
  'its eval_score (evaluate can score it). feedback lists recurring review issues to avoid.';

/** The tool list as MCP shows it, computed once: JSON schemas derived from the zod contracts. */
let listed: Tool[] | null = null;
function listedTools(): Tool[] {
  listed ??= TOOLS.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: jsonSchemaOf(tool.input, 'input', tool.fields),
    outputSchema: jsonSchemaOf(tool.output, 'output'),
    annotations: { title: tool.title, ...tool.hints },
  }));
  return listed;
}

const byName = new Map<string, ToolDefinition>(TOOLS.map((t) => [t.name, t]));

/**
 * An MCP server whose tools forward to the service through a typed client. A failing call
 * becomes a tool error (isError, the code and detail in text and in `_meta.error`), never a
 * protocol error or a crash, so the model can read it and correct its arguments.
 */
export function createMcpServer(options: McpServerOptions): Server {
  const patterns = options.resources ? new PatternResources() : null;
  const server = new Server(
    { name: 'agent-memory-service', title: 'Agent execution memory', version: options.version },
    { capabilities: { tools: {}, ...(patterns ? { resources: {} } : {}) }, instructions: INSTRUCTIONS },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listedTools() }));

  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (!tool) return failure({ code: 'not_found', retryable: false, status: null, detail: `no tool named "${request.params.name}"; call tools/list` });
    try {
      const result = await tool.run(options.client, request.params.arguments ?? {});
      patterns?.remember(result);
      return {
        content: [{ type: 'text', text: (tool.render as (r: unknown) => string)(result) }],
        structuredContent: result,
      };
    } catch (err) {
      const known = toolFailureOf(err);
      if (known) return failure(known);
      options.logError(err, `MCP tool ${tool.name} failed`);
      return failure({ code: 'internal_error', retryable: false, status: null, detail: 'internal error' });
    }
  });

  if (patterns) {
    server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: patterns.list() }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [PatternResources.template] }));
    server.setRequestHandler(ReadResourceRequestSchema, (request) => {
      const contents = patterns.read(request.params.uri);
      if (!contents) {
        throw new McpError(ErrorCode.InvalidParams, `unknown resource ${request.params.uri}: only patterns returned by recall or find_by_skills in this session can be read`);
      }
      return { contents: [contents] };
    });
  }
  return server;
}

function failure(f: ToolFailure): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: renderFailure(f) }], _meta: { error: f } };
}
