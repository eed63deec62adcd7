// The API's JSON body parser: fastify's own (which refuses __proto__ and constructor keys), after
// one check of its own. Text may not hold the NUL character U+0000: PostgreSQL cannot store it in
// a text column, so the same body would work on SQLite and fail on a scaled-out service. It is
// refused on both, before anything reads the body.
import type { FastifyRequest } from 'fastify';
import { ApiError } from './api-error.js';

type Done = (err: Error | null, body?: unknown) => void;
type Parser = (req: FastifyRequest, body: string, done: Done) => void;

/** A `\u0000` escape that is not itself an escaped backslash followed by `u0000`. */
const NUL_ESCAPE = /(?:^|[^\\])(?:\\\\)*\\u0000/;

export function jsonBodyParser(parse: Parser) {
  return (req: FastifyRequest, body: string | Buffer, done: Done): void => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.includes('\\u0000') && NUL_ESCAPE.test(text)) {
      done(
        new ApiError('VALIDATION_ERROR', {
          details: [
            {
              code: 'nul_character',
              path: ['body'],
              message: 'Text must not contain the NUL character (\\u0000): remove it from every string of the body.',
            },
          ],
        }),
      );
      return;
    }
    parse(req, text, done);
  };
}
