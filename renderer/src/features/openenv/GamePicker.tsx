import { useEffect, useState } from 'react';
import type { CallOutput } from '../../../../core/api';
import { backend } from '../../store/app';
import { attempt } from '../../store/report';

type Described = CallOutput<'openenv.remote.describe'>;

/**
 * The games the server at `url` serves (serve-env's GET /tasks), read a moment after the URL stops
 * changing. A server that serves one game (or says nothing of games) offers no choice. `game` is the
 * env_hash chosen, undefined for the server's first (what the calls play without one).
 */
export function useServedGames(url: string): { games: Described['games']; game: string | undefined; setGame(g: string | undefined): void } {
  const [games, setGames] = useState<Described['games']>([]);
  const [game, setGame] = useState<string | undefined>(undefined);
  useEffect(() => {
    setGames([]);
    setGame(undefined);
    if (!/^https?:\/\/\S+$/.test(url)) return;
    let live = true;
    const t = setTimeout(() => {
      // Quiet: a URL still being typed, or a server not up yet, is no error to show; Open says why.
      void attempt('openenv', 'Read the server', () => backend().call('openenv.remote.describe', { url }), { quiet: 'debug' }).then((d) => {
        if (live && d) setGames(d.games);
      });
    }, 400);
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, [url]);
  return { games, game, setGame };
}

/** A choice of game where the server serves several; nothing otherwise. */
export function GamePicker({ games, game, setGame }: ReturnType<typeof useServedGames>) {
  if (games.length < 2) return null;
  return (
    <label title="This server serves several games (its GET /tasks): the one to open and to play with a model">
      Game{' '}
      <select value={game ?? games[0]!.env} onChange={(e) => setGame(e.target.value === games[0]!.env ? undefined : e.target.value)} data-testid="remote-game">
        {games.map((g) => (
          <option key={g.env} value={g.env}>
            {g.name}
          </option>
        ))}
      </select>
    </label>
  );
}
