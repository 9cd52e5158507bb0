r"""``taugrad.distributions``: probability distributions with PyTorch's API (``torch.distributions``).

>>> from taugrad.distributions import Categorical, Normal, kl_divergence
>>> policy = Categorical(logits=scores)      # REINFORCE: loss = -(policy.log_prob(action) * reward)
>>> action = policy.sample()
>>> z = Normal(mu, sigma).rsample()         # a VAE's reparameterised latent: gradients reach mu and sigma

Every distribution has ``sample``, ``log_prob``, ``entropy``, ``mean``,
``variance``, ``batch_shape`` / ``event_shape`` and argument validation;
the continuous ones also ``rsample``.  Values and gradients of ``log_prob``
and ``entropy`` are PyTorch's; draws come from taugrad's own generator.
"""
from taugrad.distributions import constraints
from taugrad.distributions.discrete import Bernoulli, Categorical, OneHotCategorical
from taugrad.distributions.distribution import Distribution
from taugrad.distributions.gamma import Beta, Gamma
from taugrad.distributions.independent import Independent
from taugrad.distributions.kl import kl_divergence, register_kl
from taugrad.distributions.multivariate_normal import MultivariateNormal
from taugrad.distributions.univariate import Exponential, Laplace, Normal, Uniform

__all__ = [
    "Distribution", "Bernoulli", "Categorical", "OneHotCategorical", "Normal", "Laplace", "Uniform", "Exponential",
    "Gamma", "Beta", "MultivariateNormal", "Independent", "kl_divergence", "register_kl", "constraints",
]
