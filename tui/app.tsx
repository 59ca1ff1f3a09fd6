// The app: which screen is up (recordings, run, replay, bisect, help), the recording being
// looked at, its ledger and scores, and the replay and bisect sessions started from it.
import { useApp } from 'ink';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { Recording } from '../src/recording/index.js';
import { Frame } from './components/frame.js';
import { Help } from './components/help.js';
import type { RunScores } from './components/ledger-panel.js';
import { seg } from './components/lines.js';
import type { Available, LedgerView, ScoreView, TuiServices } from './data/engines.js';
import { agentPromptAt, indexSteps } from './data/steps.js';
import { useBisectSession } from './hooks/use-bisect.js';
import { type KeyRouter, KeyRouterContext, useRootKeys } from './hooks/use-keys.js';
import { useReplaySession } from './hooks/use-replay.js';
import { useSize } from './hooks/use-size.js';
import { BisectScreen } from './screens/bisect-screen.js';
import { RecordingsList } from './screens/recordings-list.js';
import { ReplayScreen } from './screens/replay-screen.js';
import { positionOfStep, RunView } from './screens/run-view.js';
import { makeTheme, ThemeContext } from './theme.js';

export interface AppProps {
  services: TuiServices;
  /** The folder the recordings list shows. */
  root?: string;
  /** Open straight into this recording's run view. */
  recording?: Recording;
  /** Fixed size (tests, bench); otherwise the terminal's. */
  width?: number;
  height?: number;
  color?: boolean;
  editPrompt?: (text: string) => Promise<string | undefined>;
  /** Shown on the replay screen (the services already send model calls there). */
  modelEndpoint?: string;
  worldDelayMs?: number;
  /** Called instead of exiting ink (tests). */
  onQuit?: () => void;
}

type Screen = 'list' | 'run' | 'replay' | 'bisect';

export function App(props: AppProps) {
  const { exit } = useApp();
  const size = useSize({ width: props.width, height: props.height });
  const theme = useMemo(() => makeTheme(props.color ?? true), [props.color]);
  const [screen, setScreen] = useState<Screen>(props.recording ? 'run' : 'list');
  const [help, setHelp] = useState(false);
  const [recording, setRecording] = useState<Recording | undefined>(props.recording);
  const [message, setMessage] = useState<string | undefined>();
  const [pos, setPos] = useState(0);
  const [highlight, setHighlight] = useState<number | undefined>();
  const [ledger, setLedger] = useState<Available<LedgerView> | undefined>();
  const [score, setScore] = useState<Available<ScoreView> | undefined>();
  const index = useMemo(() => (recording ? indexSteps(recording) : undefined), [recording]);
  const replay = useReplaySession(props.services, recording, index);
  const bisect = useBisectSession(props.services, recording);
  const { services } = props;

  useEffect(() => {
    if (!recording) return;
    let live = true;
    setLedger(undefined);
    setScore(undefined);
    services.ledger(recording).then((l) => live && setLedger(l));
    services.score(recording).then((s) => live && setScore(s));
    return () => {
      live = false;
    };
  }, [recording, services]);

  const quit = useCallback(() => (props.onQuit ? props.onQuit() : exit()), [props.onQuit, exit]);
  // Keys: one subscription for the whole app (see hooks/use-keys.ts). Help, when up, takes the
  // next key; the flag flips after the opening key has been dispatched.
  const router = useRef<KeyRouter>({ current: null }).current;
  const helpOpen = useRef(false);
  const quitRef = useRef(quit);
  quitRef.current = quit;
  const showHelp = useCallback(() => {
    setHelp(true);
    queueMicrotask(() => {
      helpOpen.current = true;
    });
  }, []);
  useRootKeys((input, key) => {
    if (helpOpen.current) {
      if (input === 'q') return quitRef.current();
      helpOpen.current = false;
      setHelp(false);
      return;
    }
    router.current?.(input, key);
  });

  const open = useCallback(
    (dir: string) => {
      services.readRecording(dir).then(
        (r) => {
          setMessage(undefined);
          setRecording(r);
          setPos(0);
          setHighlight(undefined);
          replay.reset();
          bisect.reset();
          setScreen('run');
        },
        (error: Error) => setMessage(error.message),
      );
    },
    [services, replay.reset, bisect.reset],
  );

  const gotoStep = useCallback(
    (stepId: number) => {
      if (!index) return;
      setPos(positionOfStep(index, stepId));
      setHighlight(stepId);
      setScreen('run');
    },
    [index],
  );

  const { width, height } = size;
  const baselineScores: RunScores = {
    label: recording?.manifest.replayOf ? 'this replay' : 'baseline',
    ...(ledger ? { ledger } : {}),
    ...(score ? { score } : {}),
  };
  const runs: RunScores[] = [baselineScores];
  if (replay.session.phase === 'done') {
    runs.push({
      label: 'replay',
      ...(replay.session.ledger ? { ledger: replay.session.ledger } : {}),
      ...(replay.session.score ? { score: replay.session.score } : {}),
    });
  }

  let body: React.ReactNode;
  if (help) {
    body = (
      <Frame
        title={[seg('tapedeck ', { bold: true, tint: 'accent' }), seg('help')]}
        keys={[
          ['any key', 'close'],
          ['q', 'quit'],
        ]}
        width={width}
        height={height}
      >
        <Help width={width} height={height - 3} />
      </Frame>
    );
  } else if (screen === 'list' || !recording || !index) {
    body = (
      <RecordingsList
        root={props.root ?? 'recordings'}
        services={services}
        width={width}
        height={height}
        isActive={!help}
        onOpen={open}
        onQuit={quit}
        onHelp={showHelp}
        {...(message ? { message } : {})}
      />
    );
  } else if (screen === 'replay') {
    // The prompt of the agent at the step the run view is on (a run may hold several agents).
    const prompt = agentPromptAt(recording, index.rows[Math.min(pos, index.rows.length - 1)]?.stepId);
    body = (
      <ReplayScreen
        baselineIndex={index}
        baselineName={recording.manifest.name}
        {...(prompt !== undefined
          ? { baselinePrompt: prompt.text, promptStep: prompt.stepId, promptAgents: prompt.agents }
          : {})}
        session={replay.session}
        baselineScores={baselineScores}
        {...(props.modelEndpoint ? { modelEndpoint: props.modelEndpoint } : {})}
        width={width}
        height={height}
        isActive={!help}
        {...(props.editPrompt ? { editPrompt: props.editPrompt } : {})}
        onStart={(p) => void replay.start(p, prompt !== undefined && prompt.agents > 1 ? prompt.text : undefined)}
        onReset={replay.reset}
        onBack={() => setScreen('run')}
        onGoto={gotoStep}
        onQuit={quit}
        onHelp={showHelp}
      />
    );
  } else if (screen === 'bisect') {
    body = (
      <BisectScreen
        index={index}
        name={recording.manifest.name}
        session={bisect.session}
        width={width}
        height={height}
        isActive={!help}
        onStart={() => void bisect.start()}
        onBack={() => setScreen('run')}
        onGoto={gotoStep}
        onQuit={quit}
        onHelp={showHelp}
      />
    );
  } else {
    body = (
      <RunView
        recording={recording}
        index={index}
        services={services}
        width={width}
        height={height}
        pos={Math.min(pos, Math.max(0, index.rows.length - 1))}
        onPos={setPos}
        {...(ledger ? { ledger } : {})}
        scores={runs}
        {...(highlight !== undefined ? { highlight } : {})}
        {...(replay.session.phase === 'running'
          ? { note: 'replay running (r)' }
          : replay.session.phase === 'done'
            ? { note: 'replay done (r)' }
            : bisect.session.phase === 'running'
              ? { note: 'bisect running (b)' }
              : {})}
        isActive={!help}
        {...(props.root !== undefined || !props.recording ? { onBack: () => setScreen('list') } : {})}
        onQuit={quit}
        onHelp={showHelp}
        onReplay={() => setScreen('replay')}
        onBisect={() => {
          setScreen('bisect');
          if (bisect.session.phase === 'idle') void bisect.start();
        }}
        {...(props.worldDelayMs !== undefined ? { worldDelayMs: props.worldDelayMs } : {})}
      />
    );
  }
  if (help) router.current = null;
  return (
    <ThemeContext.Provider value={theme}>
      <KeyRouterContext.Provider value={router}>{body}</KeyRouterContext.Provider>
    </ThemeContext.Provider>
  );
}
