/** One row of a benchmark table. */
export interface BenchRow {
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  readonly note?: string;
}

/** A titled group of benchmark rows, printed as one table by `bench/main.ts`. */
export interface BenchSection {
  readonly title: string;
  readonly rows: BenchRow[];
}
