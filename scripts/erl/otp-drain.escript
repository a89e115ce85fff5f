#!/usr/bin/env escript
%% The seed's own reader (issue 45, seed 002): an Erlang/OTP `socket:recv(S, 0)` loop draining one
%% loopback stream, for scripts/drain-bench.ts. `escript otp-drain.escript [RCVBUF]` listens on
%% 127.0.0.1:0, prints {"port":N}, accepts one connection (setting {otp, rcvbuf} to RCVBUF bytes when
%% given: the size of OTP's own read buffer, 8 KiB by default before OTP's adaptive buffer), recv()s to
%% the end and prints one line {"bytes","reads","seconds","bytesPerSecond","cpuSeconds"} (cpuSeconds:
%% the runtime's CPU time, erlang:statistics(runtime), from the accept on). Loopback only.
-mode(compile).

main(Args) ->
    {ok, L} = socket:open(inet, stream, tcp),
    ok = socket:bind(L, #{family => inet, addr => {127, 0, 0, 1}, port => 0}),
    ok = socket:listen(L),
    {ok, #{port := Port}} = socket:sockname(L),
    io:format("{\"port\":~b}~n", [Port]),
    {ok, S} = socket:accept(L),
    case Args of
        [Size] -> ok = socket:setopt(S, {otp, rcvbuf}, list_to_integer(Size));
        [] -> ok
    end,
    {Cpu0, _} = erlang:statistics(runtime),
    T0 = erlang:monotonic_time(microsecond),
    {Bytes, Reads} = loop(S, 0, 0),
    Seconds = (erlang:monotonic_time(microsecond) - T0) / 1.0e6,
    {Cpu1, _} = erlang:statistics(runtime),
    socket:close(S),
    io:format("{\"bytes\":~b,\"reads\":~b,\"seconds\":~.6f,\"bytesPerSecond\":~.1f,\"cpuSeconds\":~.3f}~n",
              [Bytes, Reads, Seconds, Bytes / Seconds, (Cpu1 - Cpu0) / 1000]).

loop(S, Bytes, Reads) ->
    case socket:recv(S, 0) of
        {ok, Bin} -> loop(S, Bytes + byte_size(Bin), Reads + 1);
        {error, closed} -> {Bytes, Reads}
    end.
