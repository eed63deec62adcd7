// Types of scripts/chromium.mjs for the TypeScript tests that import it.
export declare const CHROMIUM_PATH: string;
export declare const CHROMIUM_ARGS: readonly string[];
