import type { BuildOptions } from "esbuild"
export declare const serverBundleOptions: (entry: string, outfile: string) => BuildOptions
