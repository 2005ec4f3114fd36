import { z } from 'zod';
import type { ServiceClient } from '../client/index.js';
import { PatternKey } from '../contracts/common.js';
import {
  AnalyzeFailuresRequest, AnalyzeFailuresResponse, ComposeRequest, ComposeResponse, EvaluateRequest, EvaluateResponse,
  FeedbackQuery, FeedbackResponse,
} from '../contracts/llm.js';
import {
  DeletePatternResponse, LearnRequest, LearnResponse, MetricsResponse, OutcomeRequest, OutcomeResponse, RecallRequest, RecallResponse,
  SkillsRegisterRequest, SkillsRegisterResponse, SkillsSearchResponse,
} from '../contracts/memory.js';
import { ToolArgumentError } from './errors.js';
import {
  renderAnalyzeFailures, renderCompose, renderDelete, renderEvaluate, renderFeedback, renderLearn, renderMetrics,
  renderOutcome, renderRecall, renderSkillsRegister, renderSkillsSearch,
} from './render.js';

export type ToolArgs = Record<string, unknown>;

/** MCP tool annotations (hints for the client's confirmation UI). */
export interface ToolHints {
  readOnlyHint: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint: false;
}

/**
 * One MCP tool over one REST route. `input` and `output` are the route's zod contracts (the
 * JSON schemas shown to the model are derived from them); arguments are not validated here but
 * by the route itself, so MCP and REST callers get the same checks and the same messages.
 */
export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  input: z.ZodObject;
  output: z.ZodObject;
  /** Descriptions for the model, per input field. */
  fields: Record<string, string>;
  hints: ToolHints;
  run(client: ServiceClient, args: ToolArgs): Promise<Record<string, unknown>>;
  render(result: never): string;
}

const define = <O extends z.ZodObject>(
  def: Omit<ToolDefinition, 'output' | 'run' | 'render'> & {
    output: O;
    run(client: ServiceClient, args: ToolArgs): Promise<z.infer<O>>;
    render(result: z.infer<O>): string;
  },
): ToolDefinition => def as unknown as ToolDefinition;

const SkillsSearchInput = z.object({
  skills: z.array(z.string().max(100)).min(1).max(100),
  match_all: z.boolean().default(false),
}).strict();

const RecallInput = RecallRequest.omit({ readonly: true }).extend({ mark_reused: z.boolean().default(false) });

// The routes' bodies are typed by their contracts; here arguments travel as the model sent them.
const asBody = <T>(args: ToolArgs): T => args as T;

const READ = { readOnlyHint: true, openWorldHint: false } as const;
const WRITE = { readOnlyHint: false, destructiveHint: false, openWorldHint: false } as const;

export const TOOLS: readonly ToolDefinition[] = [
  define({
    name: 'recall',
    title: 'Recall similar solutions',
    description:
      'Search the execution memory for stored solutions to tasks similar to yours. Call it BEFORE writing code for a ' +
      'task: a match with reuse_tier "duplicate" can be reused as is, "adapt" is a good starting point, "fresh" is ' +
      'only loosely related. Returns matches ranked by score (meaning and shared words) with their similarity (0-1), the stored code and its success score, ' +
      'and a recall_id: after reusing a match, tell report_outcome how it went. Read-only unless mark_reused is true.',
    input: RecallInput,
    output: RecallResponse,
    fields: {
      task: 'the task you are about to solve, in plain words',
      limit: 'how many matches to return (1-50)',
      offset: 'skip this many matches (paging; use next_offset of the previous answer)',
      deduplicate: 'keep only the best of near-identical stored tasks',
      eval_weighted: 'rank with the evaluation history of each pattern, not raw similarity only',
      classification: 'only patterns with this classification',
      source: 'only patterns from this source',
      min_score: 'only patterns whose success score is at least this (0-10)',
      mark_reused: 'set true when you will actually reuse the returned code: it counts as a reuse and improves ranking',
      explain: 'add each match\'s score parts (cosine, centred cosine, BM25, factors, tier rule) and the tier policy in force',
      verify: 'ask the service\'s LLM whether each duplicate/adapt match really solves your task (one extra call; can only lower a tier)',
    },
    hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    run: (client, args) => {
      const { mark_reused: markReused, ...rest } = args;
      if (markReused !== undefined && typeof markReused !== 'boolean') throw new ToolArgumentError('mark_reused', 'expected true or false');
      return client.recall({ ...asBody<RecallRequest>(rest), readonly: markReused !== true });
    },
    render: renderRecall,
  }),
  define({
    name: 'report_outcome',
    title: 'Report how a reuse went',
    description:
      'After reusing a match of a recall, report whether it worked: recall_id from the recall answer, pattern_key of the ' +
      'match you reused, passed true or false (e.g. did the tests pass). A failure\'s detail becomes a lesson shown to the ' +
      'next agent that recalls this pattern for a similar task, and a failing pattern ranks lower for such tasks. ' +
      'Reporting the same recall_id and pattern_key again replaces the earlier report.',
    input: OutcomeRequest,
    output: OutcomeResponse,
    fields: {
      recall_id: 'the recall_id of the recall answer whose match you reused',
      pattern_key: 'the pattern_key of the match you reused',
      passed: 'true when the reused code worked (tests passed), false when it did not',
      score: 'how well it worked, 0 to 10 (optional)',
      detail: 'why it failed (or worked), in one or two sentences: the lesson for the next agent (optional, at most 2000 characters)',
      source: 'who judged it: tests, evaluator, human or agent (optional)',
    },
    hints: WRITE,
    run: (client, args) => client.reportOutcome(asBody(args)),
    render: renderOutcome,
  }),
  define({
    name: 'learn',
    title: 'Store a solution',
    description:
      'Store a task and the code that solved it, with its evaluation score (0-10), so later recalls can reuse it. ' +
      'Call it after a solution ran and was judged; low scores are stored too and help analyze_failures. Returns ' +
      'whether it was stored, its pattern_key and the project pattern count.',
    input: LearnRequest,
    output: LearnResponse,
    fields: {
      task: 'the task that was solved, in plain words',
      code: 'the code that solved it',
      eval_score: 'how well it worked, 0 (failed) to 10 (perfect); use evaluate when unsure',
      output: 'what the code produced (optional)',
      run_id: 'your run identifier, for tracing (optional)',
      verify_duplicates: 'before merging into a near-identical stored task, ask the LLM whether both really do the same job',
    },
    hints: WRITE,
    run: (client, args) => client.learn(asBody(args)),
    render: renderLearn,
  }),
  define({
    name: 'evaluate',
    title: 'Evaluate a solution',
    description:
      'Have independent LLM judges score code (and its output) for a task: returns the median score 0-10, the ' +
      'variance between judges and written feedback. Use the median as eval_score for learn. Needs an LLM provider ' +
      'on the server; slow and rate-limited as an expensive call.',
    input: EvaluateRequest,
    output: EvaluateResponse,
    fields: {
      task: 'the task the code is meant to solve',
      code: 'the code to judge',
      output: 'what the code produced when run',
      num_evals: 'how many judges (1-10)',
      pattern_key: 'record the median against this stored pattern',
    },
    hints: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    run: (client, args) => client.llm.evaluate(asBody(args)),
    render: renderEvaluate,
  }),
  define({
    name: 'compose',
    title: 'Compose a pipeline',
    description:
      'Split a larger task into stages and recall stored code for each one; returns the stages with their reuse tier, ' +
      'similarity and code, and whether the stages connect (reads/writes). Experimental; needs an LLM provider.',
    input: ComposeRequest,
    output: ComposeResponse,
    fields: { task: 'the larger task to break down' },
    hints: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    run: (client, args) => client.llm.compose(asBody(args)),
    render: renderCompose,
  }),
  define({
    name: 'feedback',
    title: 'Recurring review feedback',
    description:
      'List the quality issues evaluators raised most often (with counts), optionally for one task type. Read it ' +
      'before writing code to avoid known mistakes.',
    input: FeedbackQuery,
    output: FeedbackResponse,
    fields: { task_type: 'only feedback for this task type', limit: 'items to return (1-100)', offset: 'skip this many (paging)' },
    hints: READ,
    run: (client, args) => client.llm.feedback(asBody(args)),
    render: renderFeedback,
  }),
  define({
    name: 'analyze_failures',
    title: 'Cluster failed tasks',
    description:
      'Group the recurring issues evaluators reported (see evaluate) into failure modes, phrased differently but ' +
      'meaning the same, largest first: what keeps going wrong in this project. Returns each cluster with a ' +
      'representative issue, its members, how often it was seen and the average score.',
    input: AnalyzeFailuresRequest,
    output: AnalyzeFailuresResponse,
    fields: { min_count: 'only clusters seen at least this many times' },
    hints: READ,
    run: (client, args) => client.llm.analyzeFailures(asBody(args)),
    render: renderAnalyzeFailures,
  }),
  define({
    name: 'delete_pattern',
    title: 'Delete a stored pattern',
    description:
      'Permanently delete one stored pattern by its key (patterns/<id>), e.g. a wrong or leaked solution. Cannot be ' +
      'undone; needs an admin key.',
    input: z.object({ key: PatternKey }).strict(),
    output: DeletePatternResponse,
    fields: { key: 'the pattern key, as returned by recall or learn (patterns/<id>)' },
    hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    run: (client, args) => {
      if (typeof args.key !== 'string') throw new ToolArgumentError('key', 'expected a pattern key like patterns/<id>');
      return client.deletePattern(args.key);
    },
    render: renderDelete,
  }),
  define({
    name: 'metrics',
    title: 'Memory metrics',
    description: 'Counts for this project: runs, success rate, average eval score, stored patterns and reuse rate.',
    input: z.object({}).strict(),
    output: MetricsResponse,
    fields: {},
    hints: READ,
    run: (client) => client.metrics(),
    render: renderMetrics,
  }),
  define({
    name: 'register_skills',
    title: 'Tag a pattern with skills',
    description:
      'Attach skill tags (e.g. "csv", "retry", "pandas") to a stored pattern so find_by_skills can find it. Returns ' +
      'the pattern key and its tags.',
    input: SkillsRegisterRequest,
    output: SkillsRegisterResponse,
    fields: { pattern_key: 'the pattern to tag (patterns/<id>)', skills: 'the skill tags' },
    hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: (client, args) => client.skillsRegister(asBody(args)),
    render: renderSkillsRegister,
  }),
  define({
    name: 'find_by_skills',
    title: 'Find patterns by skills',
    description:
      'Find stored patterns tagged with the given skills (any of them, or all with match_all). Returns the patterns ' +
      'with their tags and code.',
    // The REST body also takes `required` (the reference client's name); a model gets one name.
    input: SkillsSearchInput,
    output: SkillsSearchResponse,
    fields: { skills: 'skill tags to look for', match_all: 'require every tag instead of any' },
    hints: READ,
    run: (client, args) => client.skillsSearch(asBody(args)),
    render: renderSkillsSearch,
  }),
];

/** The JSON schema of a contract as MCP lists it (draft-07, what SDK clients validate with). */
export function jsonSchemaOf(schema: z.ZodObject, io: 'input' | 'output', fields: Record<string, string> = {}): {
  type: 'object';
  properties?: Record<string, object>;
  [key: string]: unknown;
} {
  const json = z.toJSONSchema(schema, { target: 'draft-7', io, unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  const properties = (json.properties ?? {}) as Record<string, Record<string, unknown>>;
  for (const [name, description] of Object.entries(fields)) {
    if (properties[name]) properties[name] = { description, ...properties[name] };
  }
  return { ...json, type: 'object', properties };
}
