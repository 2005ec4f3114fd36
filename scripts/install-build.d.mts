export declare const LEDGER: string;
export declare const GRACE_MS: number;
/** Moves every file of `from` into `to` (created when missing); `from` is left empty. */
export declare function installBuild(from: string, to: string, now?: number): void;
