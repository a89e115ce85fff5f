#!/usr/bin/env escript
%% Seed 000's fix, made from the installed broker's own osiris: reads osiris_replica and
%% osiris_replica_reader from their beams' debug_info, removes the {recbuf, _} option from
%% osiris_replica:listener_opts/0 and the {sndbuf, _} option from
%% osiris_replica_reader:connect_options/0 (the two setsockopt calls that pin the replica sockets),
%% and writes each module as Erlang source OUTDIR/<module>.erl for erlc. Prints one line per module:
%% "<module> <function>: removed <option>". Exits 1 when a module lacks debug_info or the option is
%% not where osiris 1.3.1 has it (another osiris: nothing is written for it).
%%   escript scripts/lib/osiris-unpin.escript EBIN OUTDIR
-mode(compile).

main([Ebin, Out]) ->
    Patches = [{osiris_replica, listener_opts, recbuf},
               {osiris_replica_reader, connect_options, sndbuf}],
    lists:foreach(fun(P) -> patch(Ebin, Out, P) end, Patches);
main(_) ->
    io:format(standard_error, "usage: osiris-unpin.escript EBIN OUTDIR~n", []),
    halt(2).

patch(Ebin, Out, {Mod, Fun, Opt}) ->
    Beam = filename:join(Ebin, atom_to_list(Mod) ++ ".beam"),
    Forms = case beam_lib:chunks(Beam, [debug_info]) of
                {ok, {Mod, [{debug_info, {debug_info_v1, Backend, Data}}]}} ->
                    case Backend:debug_info(erlang_v1, Mod, Data, []) of
                        {ok, F} -> F;
                        Err -> fail("~s: no abstract code: ~p", [Beam, Err])
                    end;
                Err -> fail("~s: no debug_info: ~p", [Beam, Err])
            end,
    {New, Removed} = lists:mapfoldl(
        fun({function, L, Name, 0, Clauses}, N) when Name =:= Fun ->
                {Cs, N1} = lists:mapfoldl(fun(C, Acc) -> strip(C, Opt, Acc) end, N, Clauses),
                {{function, L, Name, 0, Cs}, N1};
           (Form, N) -> {Form, N}
        end, 0, Forms),
    Removed =:= 1 orelse fail("~s:~s/0: expected one {~s, _} option, found ~b", [Mod, Fun, Opt, Removed]),
    %% -file attributes would point erlc at the original source's lines; the rest prints as it was
    Src = [erl_pp:form(F) || F <- New, not is_file_attr(F)],
    ok = file:write_file(filename:join(Out, atom_to_list(Mod) ++ ".erl"), Src),
    io:format("~s ~s: removed ~s~n", [Mod, Fun, Opt]).

is_file_attr({attribute, _, file, _}) -> true;
is_file_attr(_) -> false.

%% Removes list elements {Opt, _} anywhere in the term (the option list of the function's body).
strip({cons, _L, {tuple, _, [{atom, _, Opt}, _]}, Tail}, Opt, N) ->
    strip(Tail, Opt, N + 1);
strip(T, Opt, N) when is_tuple(T) ->
    {L, N1} = strip(tuple_to_list(T), Opt, N),
    {list_to_tuple(L), N1};
strip(L, Opt, N) when is_list(L) ->
    lists:mapfoldl(fun(X, Acc) -> strip(X, Opt, Acc) end, N, L);
strip(X, _Opt, N) -> {X, N}.

fail(Fmt, Args) ->
    io:format(standard_error, Fmt ++ "~n", Args),
    halt(1).
