function exportLearnables(net, filename, version)
%EXPORTLEARNABLES Save the learnables of a network for dlformat.io.load_learnables.
%   exportLearnables(net, filename) writes net.Learnables as three N-by-1 cell
%   arrays, Layer, Parameter and Value, to the MAT-file filename. Layer names may
%   hold any characters (they are cell contents, not struct field names). Values are
%   plain numeric arrays: dlarray data is extracted and gpuArray data gathered.
%
%   A network with state (net.State, e.g. batch normalization statistics) also gets
%   a struct State holding the same three cell arrays for its state rows.
%
%   exportLearnables(net, filename, version) chooses the MAT-file version: "-v7"
%   (the default while the values fit in 2 GB), "-v7.3" (the default beyond), or
%   "-v6". net may also be a table, or a struct, with Layer, Parameter and Value.
%
%   In Python:
%       dlformat.io.load_learnables(model, filename)
%
%   See also importLearnables.

    if (isstruct(net) && isfield(net, 'Learnables')) || (isobject(net) && isprop(net, 'Learnables'))
        learnables = net.Learnables;
    else
        learnables = net;
    end
    [Layer, Parameter, Value, bytes] = columns(learnables);
    names = {'Layer', 'Parameter', 'Value'};
    hasState = (isstruct(net) && isfield(net, 'State')) || (isobject(net) && isprop(net, 'State'));
    if hasState && numel(net.State.Value) > 0
        [State.Layer, State.Parameter, State.Value, stateBytes] = columns(net.State);
        bytes = bytes + stateBytes;
        names{end + 1} = 'State';
    end
    if nargin < 3
        if bytes > 2^31
            version = '-v7.3';
        else
            version = '-v7';
        end
    end
    save(filename, names{:}, char(version));
end

function [Layer, Parameter, Value, bytes] = columns(table)
    Layer = reshape(cellstr(table.Layer), [], 1);
    Parameter = reshape(cellstr(table.Parameter), [], 1);
    Value = reshape(table.Value, [], 1);
    if numel(Parameter) ~= numel(Layer) || numel(Value) ~= numel(Layer)
        error('exportLearnables:layout', ...
            'Layer, Parameter and Value must have the same number of rows (%d, %d, %d).', ...
            numel(Layer), numel(Parameter), numel(Value));
    end
    bytes = 0;
    for i = 1:numel(Value)
        Value{i} = plainValue(Value{i});
        bytes = bytes + numel(Value{i}) * bytesPerElement(Value{i});
    end
end

function v = plainValue(v)
    if isa(v, 'dlarray')
        v = extractdata(v);
    end
    if isa(v, 'gpuArray')
        v = gather(v);
    end
    if ~isnumeric(v)
        error('exportLearnables:value', 'Learnable values must be numeric; found a %s.', class(v));
    end
end

function n = bytesPerElement(v)
    switch class(v)
        case {'double', 'int64', 'uint64'}
            n = 8;
        case {'single', 'int32', 'uint32'}
            n = 4;
        case {'int16', 'uint16'}
            n = 2;
        otherwise
            n = 1;
    end
end
