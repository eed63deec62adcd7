// Where a warm Blender's lines go among the task logs (task-logs extension): one process serves
// many tasks, and loads its scene before any of them may have come. Lines outside any frame (the
// load, between frames) go to the log of the task whose frame began last; the first task handed
// to the process takes the load's lines, kept until then.
import type { Task } from '../../ports/tasks.js';
import type { TaskLogLines } from '../logs/task-log.js';

/** Lines of a scene load kept until a task's log takes them (a load started ahead of any task). */
const MAX_LOAD_LINES = 5000;

export class WarmLogs {
  /** The log of the task whose frame began last. */
  sink: TaskLogLines | undefined;
  private loadLines: string[] = [];
  private loadLinesDropped = 0;
  private loadLogOwner: string | undefined;

  constructor(private readonly label: string) {}

  /**
   * Points `log` at this process: the first task gets the scene load's lines (those so far, then
   * the rest as they come); later ones a line naming the task whose log holds the load.
   */
  attach(task: Task, log: TaskLogLines | undefined): void {
    if (!log) return;
    if (this.loadLogOwner === undefined) {
      this.loadLogOwner = `${task.id} attempt ${task.attempts}`;
      log.note(`warm Blender ${this.label} loads the scene for this job; its output follows`);
      if (this.loadLinesDropped > 0) log.note(`${this.loadLinesDropped} earliest lines of the load were not kept`);
      for (const l of this.loadLines) log.line('stdout', l);
      this.loadLines = [];
      this.sink = log;
    } else {
      log.note(
        `frames render in warm Blender ${this.label}, which loaded the scene during ` +
          `task ${this.loadLogOwner}: that task's log holds the load`,
      );
    }
  }

  /** A line outside any frame: to the current task's log, else kept for the first one. */
  sideLine(line: string): void {
    if (this.sink) return this.sink.line('stdout', line);
    this.loadLines.push(line);
    if (this.loadLines.length > MAX_LOAD_LINES) {
      this.loadLines.shift();
      this.loadLinesDropped++;
    }
  }
}
