"""stablehlo.convolution kernel (see below)."""
