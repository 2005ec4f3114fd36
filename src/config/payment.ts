import { str, url, type Env } from './env-readers.js';

/** Billing (hosted): off without PAYMENT_SECRET_KEY. */
export interface PaymentConfig {
  secretKey: string | null;
  webhookSecret: string | null;
  /** (+) PAYMENT_API_BASE_URL: where the processor's API is (tests point it at a fake on loopback). */
  apiBaseUrl: string | null;
  /** (+) PAYMENT_PRICE_<PLAN>_<MONTHLY|YEARLY>: the processor's price ids, each mapped to a plan. */
  prices: Record<string, { plan: 'pro' | 'team' | 'enterprise'; interval: 'month' | 'year' }>;
}

const PRICE_VARIABLES = [
  ['PAYMENT_PRICE_PRO_MONTHLY', 'pro', 'month'], ['PAYMENT_PRICE_PRO_YEARLY', 'pro', 'year'],
  ['PAYMENT_PRICE_TEAM_MONTHLY', 'team', 'month'], ['PAYMENT_PRICE_TEAM_YEARLY', 'team', 'year'],
  ['PAYMENT_PRICE_ENTERPRISE_MONTHLY', 'enterprise', 'month'], ['PAYMENT_PRICE_ENTERPRISE_YEARLY', 'enterprise', 'year'],
] as const;

export function paymentConfig(env: Env): PaymentConfig {
  const prices: PaymentConfig['prices'] = {};
  for (const [name, plan, interval] of PRICE_VARIABLES) {
    const id = str(env, name);
    if (id !== null) prices[id] = { plan, interval };
  }
  return {
    secretKey: str(env, 'PAYMENT_SECRET_KEY'),
    webhookSecret: str(env, 'PAYMENT_WEBHOOK_SECRET'),
    apiBaseUrl: url(env, 'PAYMENT_API_BASE_URL'),
    prices,
  };
}
