// What both candle file formats (the service's CSV, Binance's kline dumps) are split into, and the
// error either refuses a file with: one module beneath both parsers.
import { ImportRefusedError } from '../../validators.ts';

/** A file that cannot be imported; `problems` holds one `line N: ...` entry per fault. Nothing was written. */
export class CandleImportError extends ImportRefusedError {}

export interface CandleColumns {
  lines: number[];
  time: string[];
  open: string[];
  high: string[];
  low: string[];
  close: string[];
  volume: string[];
}
