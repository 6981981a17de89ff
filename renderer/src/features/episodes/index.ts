import './episodes.css';
import { useCommands } from '../../store/commands';
import { useWorkbench } from '../../store/workbench';
import { registerSidePanel } from '../../views/sidePanels';
import { lazyView, registerView } from '../../views/registry';
import { registerEnvAction } from '../../views/envActions';
import { openLlm, openRegret } from './store';
import { EpisodesPanel } from './EpisodesPanel';

export function registerEpisodesFeature(): void {
  registerEnvAction({ id: 'regret', label: 'Hint regret', run: (e) => openRegret(e.hash, e.name) });
  registerEnvAction({ id: 'llm', label: 'Play with a model', run: (e) => openLlm(e.hash, e.name) });
  registerSidePanel('episodes', EpisodesPanel);
  registerView('episode', lazyView(() => import('./EpisodeView').then((m) => m.EpisodeView)));
  registerView('episode-pair', lazyView(() => import('./PairView').then((m) => m.PairView)));
  registerView('episode-regret', lazyView(() => import('./RegretView').then((m) => m.RegretView)));
  registerView('episode-llm', lazyView(() => import('./LlmView').then((m) => m.LlmView)));
  useCommands.getState().register([
    {
      id: 'episodes.show',
      category: 'Episodes',
      title: 'Show Episodes',
      run: () => {
        const wb = useWorkbench.getState();
        if (wb.activity !== 'episodes' || !wb.sideVisible) wb.setActivity('episodes');
      },
    },
  ]);
}
