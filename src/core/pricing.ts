/**
 * What LLM calls cost (docs/behavior.md "Evaluation cost"): a price per million input and output
 * tokens per model. The shipped table covers the models the project names (the providers'
 * default models and their larger siblings); SERVICE_LLM_PRICES adds or replaces entries, so a
 * local OpenAI-compatible model can be priced at 0 and a price change needs no release.
 */

export interface ModelPrice {
  /** USD per 1,000,000 input (prompt) tokens. */
  input_per_mtok: number;
  /** USD per 1,000,000 output (completion) tokens. */
  output_per_mtok: number;
}

export interface TokenCount {
  input: number;
  output: number;
}

/** List prices in USD per million tokens, as the vendors publish them. */
export const DEFAULT_MODEL_PRICES: Readonly<Record<string, ModelPrice>> = {
  'gpt-4o-mini': { input_per_mtok: 0.15, output_per_mtok: 0.6 },
  'gpt-4o': { input_per_mtok: 2.5, output_per_mtok: 10 },
  'gpt-4.1-mini': { input_per_mtok: 0.4, output_per_mtok: 1.6 },
  'gpt-4.1': { input_per_mtok: 2, output_per_mtok: 8 },
  'claude-3-5-haiku-latest': { input_per_mtok: 0.8, output_per_mtok: 4 },
  'claude-3-5-sonnet-latest': { input_per_mtok: 3, output_per_mtok: 15 },
  'claude-3-7-sonnet-latest': { input_per_mtok: 3, output_per_mtok: 15 },
};

/** The price in force for `model`: the configured table first, then the shipped one; null when unknown. */
export function priceFor(model: string, configured: Readonly<Record<string, ModelPrice>>): ModelPrice | null {
  return configured[model] ?? DEFAULT_MODEL_PRICES[model] ?? null;
}

/** Rounded to a millionth of a dollar, so sums of many small calls stay readable and stable. */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}

export function costUsd(tokens: TokenCount, price: ModelPrice): number {
  return roundUsd((tokens.input * price.input_per_mtok + tokens.output * price.output_per_mtok) / 1e6);
}

/**
 * SERVICE_LLM_PRICES: `model=input:output` entries separated by commas (USD per million tokens),
 * e.g. `qwen2.5-coder=0:0,gpt-4o-mini=0.15:0.6`. Throws a message naming the bad entry.
 */
export function parsePriceTable(text: string): Record<string, ModelPrice> {
  const table: Record<string, ModelPrice> = {};
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const m = /^(.+?)=\s*([0-9]*\.?[0-9]+)\s*:\s*([0-9]*\.?[0-9]+)$/.exec(entry);
    if (!m || m[1].trim() === '') throw new Error(`"${entry}" is not model=input:output (USD per million tokens, e.g. gpt-4o-mini=0.15:0.6)`);
    table[m[1].trim()] = { input_per_mtok: Number(m[2]), output_per_mtok: Number(m[3]) };
  }
  return table;
}

/** Characters per token assumed by the cost ceiling: fewer than the usual ~4, so it errs high. */
export const CEILING_CHARS_PER_TOKEN = 3;

/**
 * The most a judged case is expected to cost before it runs: every evaluator reads the whole
 * prompt (at CEILING_CHARS_PER_TOKEN) and writes its full answer limit. A malformed reply's
 * one retry is not in it (it is rare and would double every estimate).
 */
export function costCeiling(promptChars: number, evaluators: number, maxOutputTokens: number, price: ModelPrice): number {
  const input = Math.ceil(promptChars / CEILING_CHARS_PER_TOKEN);
  return costUsd({ input: input * evaluators, output: maxOutputTokens * evaluators }, price);
}
