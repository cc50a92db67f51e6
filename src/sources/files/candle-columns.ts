// What both candle file formats (the service's CSV, Binance's kline dumps) are split into, and the
// error either refuses a file with: one module beneath both parsers.
/** A file that cannot be imported; `problems` holds one `line N: ...` entry per fault. Nothing was written. */
export class CandleImportError extends Error {
  readonly problems: string[];
  constructor(message: string, problems: string[] = []) {
    super(message);
    this.name = 'CandleImportError';
    this.problems = problems;
  }
}

export interface CandleColumns {
  lines: number[];
  time: string[];
  open: string[];
  high: string[];
  low: string[];
  close: string[];
  volume: string[];
}
