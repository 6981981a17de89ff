import type { Handlers } from '../server/dispatcher';
import type { Services } from '../services/services';

type ModelCalls = 'models.ping' | 'models.play' | 'models.turn';

export function modelsHandlers(s: Services): Pick<Handlers, ModelCalls> {
  return {
    'models.ping': ({ endpoint }) => s.models.ping(endpoint),
    'models.play': (i) => s.models.play(i),
    'models.turn': ({ id, endpoint, requestId }) => s.models.turn(id, endpoint, requestId),
  };
}
