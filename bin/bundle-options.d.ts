import type { BuildOptions, BuildResult } from "esbuild"
export declare const serverBundleOptions: (entry: string, outfile: string) => BuildOptions
export declare const removeStaleChunks: (outfile: string, result: BuildResult) => void
