// The API's answers as TypeScript types, in camelCase, and the functions that
// read them from the wire's snake_case JSON. Payloads, results and step
// results are the user's JSON and are handed over untouched. Times are Date.
function date(v) {
    return new Date(v);
}
function optDate(v) {
    return typeof v === 'string' ? new Date(v) : undefined;
}
/** set copies v to o[k] unless it is undefined (so that absent fields stay absent). */
function set(o, k, v) {
    if (v !== undefined)
        o[k] = v;
}
export function taskFromWire(w) {
    const t = {
        id: w['id'],
        queue: w['queue'],
        taskType: w['task_type'],
        payload: w['payload'] ?? null,
        priority: w['priority'],
        status: w['status'],
        attempt: w['attempt'],
        maxAttempts: w['max_attempts'],
        crashes: w['crashes'] ?? 0,
        cancelRequested: w['cancel_requested'] === true,
        history: Array.isArray(w['history']) ? w['history'].map(executionFromWire) : [],
        groupWaiting: w['group_waiting'] === true,
        orderWaiting: w['order_waiting'] === true,
        duplicate: w['duplicate'] === true,
        debounced: w['debounced'] === true,
        timeoutSeconds: w['timeout_seconds'],
        createdAt: date(w['created_at']),
    };
    if ('result' in w)
        t.result = w['result'];
    set(t, 'lastError', w['last_error']);
    set(t, 'worker', w['worker']);
    set(t, 'schedule', w['schedule']);
    set(t, 'scheduleTick', optDate(w['schedule_tick']));
    set(t, 'group', w['group']);
    set(t, 'limitKey', w['limit_key']);
    set(t, 'orderKey', w['order_key']);
    set(t, 'heldBy', w['held_by']);
    set(t, 'workflow', w['workflow']);
    set(t, 'workflowNode', w['workflow_node']);
    if ('previous' in w)
        t.previous = w['previous'];
    set(t, 'traceparent', w['traceparent']);
    const p = w['progress'];
    if (p)
        t.progress = progressFromWire(p);
    if (Array.isArray(w['steps']))
        t.steps = w['steps'].map(stepFromWire);
    const s = w['suspended'];
    if (s)
        t.suspended = suspensionFromWire(s);
    set(t, 'scheduledAt', optDate(w['scheduled_at']));
    set(t, 'startedAt', optDate(w['started_at']));
    set(t, 'finishedAt', optDate(w['finished_at']));
    return t;
}
function executionFromWire(w) {
    const e = {
        run: w['run'], worker: w['worker'], outcome: w['outcome'],
        startedAt: date(w['started_at']), finishedAt: date(w['finished_at']),
    };
    set(e, 'error', w['error']);
    return e;
}
export function progressFromWire(w) {
    const p = { fraction: w['fraction'], at: date(w['at']) };
    set(p, 'note', w['note']);
    return p;
}
function stepFromWire(w) {
    const s = { name: w['name'], run: w['run'], result: w['result'] ?? null, at: date(w['at']) };
    set(s, 'by', w['by']);
    return s;
}
export function suspensionFromWire(w) {
    return { for: w['for'], name: w['name'], until: date(w['until']) };
}
export function workflowFromWire(w) {
    const f = {
        id: w['id'], queue: w['queue'], status: w['status'],
        cancelRequested: w['cancel_requested'] === true, progress: w['progress'],
        root: nodeFromWire(w['root']), duplicate: w['duplicate'] === true, createdAt: date(w['created_at']),
    };
    if ('result' in w)
        f.result = w['result'];
    set(f, 'error', w['error']);
    set(f, 'finishedAt', optDate(w['finished_at']));
    return f;
}
function nodeFromWire(w) {
    const n = { node: w['node'], kind: w['kind'], status: w['status'] };
    set(n, 'taskId', w['task_id']);
    set(n, 'taskType', w['task_type']);
    if ('result' in w)
        n.result = w['result'];
    set(n, 'error', w['error']);
    if (Array.isArray(w['nodes']))
        n.nodes = w['nodes'].map(nodeFromWire);
    if (Array.isArray(w['children']))
        n.children = w['children'].map(nodeFromWire);
    if (w['on_success'])
        n.onSuccess = nodeFromWire(w['on_success']);
    if (w['on_complete'])
        n.onComplete = nodeFromWire(w['on_complete']);
    return n;
}
export function scheduleFromWire(w) {
    const s = {
        name: w['name'], queue: w['queue'], cron: w['cron'], timeZone: w['time_zone'],
        taskType: w['task_type'], payload: w['payload'] ?? null, priority: w['priority'],
        maxAttempts: w['max_attempts'], timeoutSeconds: w['timeout_seconds'], missed: w['missed'],
        catchUpMax: w['catch_up_max'], paused: w['paused'] === true,
        createdAt: date(w['created_at']), updatedAt: date(w['updated_at']),
    };
    set(s, 'nextRun', optDate(w['next_run']));
    set(s, 'lastTick', optDate(w['last_tick']));
    set(s, 'lastTaskId', w['last_task_id']);
    return s;
}
export function deadLetterFromWire(w) {
    return { task: taskFromWire(w['task']), reason: w['reason'], deadAt: date(w['dead_at']) };
}
export function queueFromWire(w) {
    const n = (k) => w[k] ?? 0;
    return {
        name: w['name'], paused: w['paused'] === true, queued: n('queued'), scheduled: n('scheduled'),
        running: n('running'), dead: n('dead'), queuedByPriority: w['queued_by_priority'] ?? [],
        groupWaiting: n('group_waiting'), limitWaiting: n('limit_waiting'), orderWaiting: n('order_waiting'), suspended: n('suspended'),
        submittedTotal: n('submitted_total'), succeededTotal: n('succeeded_total'), retriedTotal: n('retried_total'),
        deadTotal: n('dead_total'), cancelledTotal: n('cancelled_total'),
    };
}
export function workerFromWire(w) {
    const i = {
        id: w['id'], host: w['host'], pid: w['pid'] ?? 0,
        queues: w['queues'] ?? [], concurrency: w['concurrency'] ?? 0,
        busy: w['busy'] ?? 0, kind: w['kind'],
        startedAt: date(w['started_at']), lastHeartbeat: date(w['last_heartbeat']),
    };
    set(i, 'library', w['library']);
    return i;
}
