function net = importLearnables(net, filename)
%IMPORTLEARNABLES Assign learnables saved by dlformat.io.save_learnables to a network.
%   net = importLearnables(net, filename) reads the Layer, Parameter and Value cell
%   arrays from the MAT-file filename and assigns each value to the learnable of
%   net.Learnables with the same layer and parameter name, keeping each learnable's
%   class (single or double) and dlarray wrapping. Every row is checked before any is
%   assigned: a row naming no learnable of the network, a learnable the file lacks,
%   or a size mismatch is an error, and net is left unchanged.
%
%   In Python:
%       dlformat.io.save_learnables(model, filename)
%
%   See also exportLearnables.

    saved = load(filename);
    for column = {'Layer', 'Parameter', 'Value'}
        if ~isfield(saved, column{1})
            error('importLearnables:layout', ...
                '%s is not a learnables file: it has no variable %s.', filename, column{1});
        end
    end
    learnables = net.Learnables;
    layers = cellstr(learnables.Layer);
    parameters = cellstr(learnables.Parameter);
    values = learnables.Value;
    assigned = false(numel(layers), 1);
    for i = 1:numel(saved.Layer)
        row = find(strcmp(layers, saved.Layer{i}) & strcmp(parameters, saved.Parameter{i}));
        if isempty(row)
            error('importLearnables:unexpected', 'The network has no learnable %s/%s (row %d of %s).', ...
                saved.Layer{i}, saved.Parameter{i}, i, filename);
        end
        old = values{row};
        new = saved.Value{i};
        if ~isequal(size(old), size(new))
            error('importLearnables:size', ...
                'Layer "%s" parameter "%s" is %s in the file but %s in the network.', ...
                saved.Layer{i}, saved.Parameter{i}, mat2str(size(new)), mat2str(size(old)));
        end
        if isa(old, 'dlarray')
            values{row} = dlarray(cast(new, class(extractdata(old))));
        else
            values{row} = cast(new, class(old));
        end
        assigned(row) = true;
    end
    if ~all(assigned)
        missing = find(~assigned, 1);
        error('importLearnables:missing', '%s has no row for learnable %s/%s.', ...
            filename, layers{missing}, parameters{missing});
    end
    learnables.Value = values;
    net.Learnables = learnables;
end
