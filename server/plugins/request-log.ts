import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * One log line per request at `info`, written when the answer has gone out ("request
 * completed": id, method, path, status, time); the "incoming request" line only at `debug`.
 * Fastify's default writes both at info: at thousands of requests a second the first line
 * cost CPU and doubled the log volume while saying nothing the completed line does not (a
 * request that fails is logged with its cause by the error handler). The path is logged
 * without its query string (GET recall carries the task there) by the logger's `req`
 * serializer (adapters/logging/logger.ts).
 */
export class OneLinePerRequest extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const fields = { req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...fields, err: error }, 'request errored');
    else reply.log.info(fields, 'request completed');
  }
}
