// The one clock of arrival and send times: wall-clock microseconds, comparable across processes on
// one host (the receiver's arrival stamps and the test header's send times are compared).
export function nowUs(): number {
  return (performance.timeOrigin + performance.now()) * 1000;
}
