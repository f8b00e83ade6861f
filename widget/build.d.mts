/** The package root. */
export declare const root: string
/** dist/widget.js */
export declare const widgetOutfile: string
/** Bundles and minifies the widget into `outfile` (default dist/widget.js); returns the path. */
export declare const buildWidget: (outfile?: string) => Promise<string>
