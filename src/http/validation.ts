// zod failures become 422 `validation` with details.errors: {field: [message, ...]}.
import { z } from 'zod';
import { ApiError } from './errors.ts';

export function fieldErrors(error: z.ZodError, prefix = ''): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  for (const issue of error.issues) {
    const field = [prefix, ...issue.path.map(String)].filter(Boolean).join('.') || '_';
    (errors[field] ??= []).push(issue.message);
  }
  return errors;
}

export function parseOrThrow<T extends z.ZodType>(schema: T, input: unknown): z.output<T> {
  const result = schema.safeParse(input);
  if (!result.success) throw ApiError.validation(fieldErrors(result.error));
  return result.data;
}

/** Query-string building blocks: a query value is a string; these turn it into typed values. */
export const query = {
  int: (min: number, max: number) =>
    z.string().regex(/^-?\d+$/, 'Must be an integer.').transform(Number).pipe(z.number().int().min(min).max(max)),
  /** a non-negative decimal kept as a string, so that it reaches SQL as numeric without a float */
  decimal: () => z.string().regex(/^\d+(\.\d+)?$/, 'Must be a non-negative decimal number.'),
  csv: (maxLength: number) =>
    z.string().max(maxLength).transform((value) => value.split(',').map((item) => item.trim()).filter(Boolean)),
};
