"""The public surface stays small and complete."""

from __future__ import annotations

import dlformat

PUBLIC = {
    "DLArray", "DLFormatError", "PositionEmbeddingLayer", "__version__", "dims", "dlarray", "extractdata",
    "finddim", "getL2Factor", "getLearnRateFactor", "param_groups", "positionEmbeddingLayer", "setL2Factor",
    "setLearnRateFactor", "stripdims", "RotaryEmbedding", "SinusoidalPositionEncodingLayer",
    "sinusoidalPositionEncodingLayer",
    # networks: MATLAB's functions with MATLAB's spelling
    "DLNetwork", "dlnetwork", "addLayers", "connectLayers", "disconnectLayers", "removeLayers", "initialize",
    # MATLAB's legacy networks and output layers (issue 13)
    "LayerGraph", "layerGraph", "assembleNetwork", "SeriesNetwork", "DAGNetwork", "classify",
    "ClassificationOutputLayer", "classificationLayer", "RegressionOutputLayer", "regressionLayer",
    "PixelClassificationLayer", "pixelClassificationLayer",
    "ClassificationLayer", "RegressionLayer",  # the bases of custom output layers (issue 16)
    "forward", "predict", "analyzeNetwork", "replaceLayer", "LayerError", "resetState", "predictAndUpdateState",
    # custom layers and the functional core
    "Layer", "FunctionLayer", "functionLayer", "functional", "collate",
    # the layers of MATLAB's transformer examples, class and constructor each
    "AdditionLayer", "additionLayer", "DropoutLayer", "dropoutLayer", "FeatureInputLayer", "featureInputLayer",
    "FullyConnectedLayer", "fullyConnectedLayer", "GELULayer", "geluLayer", "LayerNormalizationLayer",
    "layerNormalizationLayer", "ReLULayer", "reluLayer", "SelfAttentionLayer", "selfAttentionLayer",
    "SequenceInputLayer", "sequenceInputLayer", "SoftmaxLayer", "softmaxLayer", "WordEmbeddingLayer",
    "wordEmbeddingLayer",
    # the recurrent layers (issue 14)
    "LSTMLayer", "lstmLayer", "BiLSTMLayer", "bilstmLayer", "GRULayer", "gruLayer", "Indexing1DLayer",
    "indexing1dLayer", "LSTMProjectedLayer", "lstmProjectedLayer", "GRUProjectedLayer", "gruProjectedLayer",
    # stepping legacy recurrent networks and variable-length sequences (issue 14)
    "classifyAndUpdateState", "minibatchpredict", "SequenceFoldingLayer", "sequenceFoldingLayer",
    "SequenceUnfoldingLayer", "sequenceUnfoldingLayer",
    # the transformer layers (issue 14)
    "AttentionLayer", "attentionLayer", "EmbeddingConcatenationLayer", "embeddingConcatenationLayer",
    "PatchEmbeddingLayer", "patchEmbeddingLayer",
    # normalization layers (issue 13)
    "BatchNormalizationLayer", "batchNormalizationLayer", "GroupNormalizationLayer", "groupNormalizationLayer",
    "InstanceNormalizationLayer", "instanceNormalizationLayer", "CrossChannelNormalizationLayer",
    "crossChannelNormalizationLayer",
    # MATLAB's image input and general-purpose layers (issue 13), class and constructor each
    "ImageInputLayer", "imageInputLayer", "Image3DInputLayer", "image3dInputLayer", "FlattenLayer",
    "flattenLayer", "ConcatenationLayer", "concatenationLayer", "DepthConcatenationLayer",
    "depthConcatenationLayer", "MultiplicationLayer", "multiplicationLayer", "LeakyReLULayer", "leakyReluLayer",
    "ClippedReLULayer", "clippedReluLayer", "ELULayer", "eluLayer", "TanhLayer", "tanhLayer", "SigmoidLayer",
    "sigmoidLayer", "SwishLayer", "swishLayer", "SoftplusLayer", "softplusLayer", "PReLULayer", "preluLayer",
    "SpatialDropoutLayer", "spatialDropoutLayer", "Crop2DLayer", "crop2dLayer", "Resize2DLayer", "resize2dLayer",
    "Resize3DLayer", "resize3dLayer",
    # convolution and pooling layers (issue 13), class and constructor each
    "Convolution1DLayer", "convolution1dLayer", "Convolution2DLayer", "convolution2dLayer", "Convolution3DLayer",
    "convolution3dLayer", "GroupedConvolution2DLayer", "groupedConvolution2dLayer", "TransposedConvolution1DLayer",
    "transposedConv1dLayer", "TransposedConvolution2DLayer", "transposedConv2dLayer",
    "TransposedConvolution3DLayer", "transposedConv3dLayer", "MaxPooling1DLayer", "maxPooling1dLayer",
    "MaxPooling2DLayer", "maxPooling2dLayer", "MaxPooling3DLayer", "maxPooling3dLayer", "AveragePooling1DLayer",
    "averagePooling1dLayer", "AveragePooling2DLayer", "averagePooling2dLayer", "AveragePooling3DLayer",
    "averagePooling3dLayer", "GlobalMaxPooling1DLayer", "globalMaxPooling1dLayer", "GlobalMaxPooling2DLayer",
    "globalMaxPooling2dLayer", "GlobalMaxPooling3DLayer", "globalMaxPooling3dLayer", "GlobalAveragePooling1DLayer",
    "globalAveragePooling1dLayer", "GlobalAveragePooling2DLayer", "globalAveragePooling2dLayer",
    "GlobalAveragePooling3DLayer", "globalAveragePooling3dLayer",
    # the layers real MATLAB code uses (issue 23, item 8), class and constructor each
    "InputLayer", "inputLayer", "IdentityLayer", "identityLayer", "MishLayer", "mishLayer",
    "DicePixelClassificationLayer", "dicePixelClassificationLayer", "generalizedDice",
    "MaxUnpooling2DLayer", "maxUnpooling2dLayer", "NetworkLayer", "networkLayer", "NeuralODELayer",
    "neuralODELayer",
    # MATLAB's losses and the custom training loop
    "crossentropy", "indexcrossentropy", "mse", "l1loss", "l2loss", "huber", "training", "dlfeval", "dlgradient",
    "dlaccelerate", "AcceleratedFunction", "clearCache", "dljacobian", "dldivergence", "ctc",
    "dlupdate", "adamupdate", "sgdmupdate", "rmspropupdate", "minibatchqueue", "MiniBatchQueue", "padsequences",
    "trainingProgressMonitor", "TrainingProgressMonitor", "recordMetrics", "updateInfo", "groupSubPlot",
    "lbfgsupdate", "lbfgsState", "LBFGSState", "dllaplacian", "dlode45",
    # trainingOptions, schedules, trainnet and trainNetwork (issue 16)
    "trainingOptions", "TrainingOptions", "trainnet", "TrainingInfo", "trainNetwork", "LegacyTrainingInfo",
    "testnet",
    "piecewiseLearnRate", "exponentialLearnRate", "LearnRateSchedule",
    # the metric objects and deep.Metric (issue 16)
    "accuracyMetric", "AccuracyMetric", "aucMetric", "AUCMetric", "fScoreMetric", "FScoreMetric", "mapeMetric",
    "MAPEMetric", "precisionMetric", "PrecisionMetric", "recallMetric", "RecallMetric", "rmseMetric", "RMSEMetric",
    "rSquaredMetric", "RSquaredMetric", "Metric",
    # MATLAB's functions on dlarrays (issue 12, docs/dlarray_functions.md)
    "abs", "acos", "acosh", "all", "any", "asin", "asinh", "atan", "atan2", "atanh", "cast", "cat", "ceil",
    "circshift", "cos", "cosh", "cot", "csc", "ctranspose", "cumsum", "double", "eq", "erf", "exp", "fix", "flip",
    "floor", "gather", "ge", "gt", "horzcat", "ipermute", "isdlarray", "isfinite", "isinf", "isnan", "le", "log",
    "logical", "lt", "max", "mean", "min", "minus", "mod", "mtimes", "ndims", "ne", "norm", "numel", "ones",
    "pagemtimes", "permute", "plus", "power", "prod", "rand", "randn", "rdivide", "relu", "rem", "repmat",
    "reshape", "round", "sec", "sigmoid", "sign", "sin", "single", "sinh", "size", "sqrt", "squeeze", "sum", "tan",
    "tanh", "times", "transpose", "uminus", "underlyingType", "uplus", "vecnorm", "vertcat", "xor", "zeros",
    "onehotencode", "onehotdecode", "scores2label",
    # the functions of issue 12's list read in docs/dlarray_functions.md#the-list-page-and-dlformat
    "ldivide", "rescale", "normalize", "isfloat", "islogical", "isnumeric", "isreal", "isscalar", "isvector",
    "ismatrix", "isrow", "iscolumn", "isempty", "length", "isequal", "isequaln",
    # MATLAB's categorical arrays (issue 26, docs/data.md)
    "Categorical", "categorical", "categories", "countcats", "addcats", "removecats", "mergecats", "renamecats",
    "reordercats", "setcats", "summary", "isundefined", "iscategorical", "iscategory", "isordinal",
    "isprotected", "ismember", "unique", "string", "cellstr",
    # GPU and random numbers (issue 26)
    "gpuArray", "canUseGPU", "gpuDevice", "GPUDevice", "gpuDeviceCount", "rng", "RngSettings",
}  # fmt: skip


def test_all_lists_exactly_the_public_api():
    assert set(dlformat.__all__) == PUBLIC
    for name in PUBLIC:
        assert getattr(dlformat, name) is not None


def test_the_error_is_a_value_error():
    assert issubclass(dlformat.DLFormatError, ValueError)


def test_the_package_is_typed():
    from importlib import resources

    assert resources.files("dlformat").joinpath("py.typed").is_file()


def test_every_public_layer_and_network_class_has_runnable_examples():
    import inspect

    from torch import nn

    classes = [getattr(dlformat, name) for name in dlformat.__all__]
    modules = [
        c for c in classes if inspect.isclass(c) and issubclass(c, nn.Module) and c is not dlformat.Layer
    ]
    assert len(modules) >= 15
    missing = [c.__name__ for c in modules if "Examples:" not in (c.__doc__ or "") or ">>> " not in c.__doc__]
    assert not missing  # the examples themselves run as doctests (pytest --doctest-modules)
