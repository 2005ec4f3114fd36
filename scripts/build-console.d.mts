export declare const SCRIPT_BUDGET_GZIP_BYTES: number;
export interface ConsoleBuild {
  script: string;
  /** The tab icon's asset name (favicon-<hash>.svg), linked from index.html. */
  icon: string;
  script_bytes: number;
  script_gzip_bytes: number;
  budget_gzip_bytes: number;
}
export declare function buildConsole(root: string, options?: { out?: string; budget?: number }): Promise<ConsoleBuild>;
