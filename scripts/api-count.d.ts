// Types of scripts/api-count.js, for the test that reads the reports with it.

/** The exported names of one entry point's report, and the API Extractor warnings left in it (by message id). */
export interface EntryPointCount {
  readonly names: string[];
  readonly warnings: Record<string, number>;
}

/** What {@link countReports} finds in a folder of API reports. */
export interface ReportCount {
  /** Per entry point (`.`, `./worker`, ...). */
  readonly entries: Record<string, EntryPointCount>;
  /** The names exported by more than one entry point, with those entry points. */
  readonly shared: Record<string, string[]>;
  /** Exported names summed over the entry points. */
  readonly total: number;
  /** Distinct exported names. */
  readonly distinct: number;
}

export function countReports(dir: string): ReportCount;
