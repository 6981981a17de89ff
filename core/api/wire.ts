import { z } from 'zod';
import { apiErrorSchema } from './errors';

/** Frames on the WebSocket. Kept tiny: one request id per call, events are fire-and-forget. */
export const clientFrameSchema = z.object({
  t: z.literal('call'),
  id: z.number().int().nonnegative(),
  name: z.string().max(200),
  input: z.unknown(),
});
export type ClientFrame = z.infer<typeof clientFrameSchema>;

// A plain union: the two result shapes share t: 'result', which a discriminated union refuses
// (zod throws "Duplicate discriminator value" at the first parse).
export const serverFrameSchema = z.union([
  z.object({ t: z.literal('result'), id: z.number(), ok: z.literal(true), value: z.unknown() }),
  z.object({ t: z.literal('result'), id: z.number(), ok: z.literal(false), error: apiErrorSchema }),
  z.object({ t: z.literal('event'), name: z.string(), payload: z.unknown() }),
]);
export type ServerFrame = z.infer<typeof serverFrameSchema>;
