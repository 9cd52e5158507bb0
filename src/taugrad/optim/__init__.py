"""Optimizers and learning-rate schedules, shaped like ``torch.optim``.

>>> opt = taugrad.optim.Adam(model.parameters(), lr=1e-3)
>>> opt.zero_grad(); loss.backward(); opt.step()
"""
from taugrad.optim import lr_scheduler
from taugrad.optim.adadelta import Adadelta
from taugrad.optim.adagrad import Adagrad
from taugrad.optim.adam import Adam, AdamW
from taugrad.optim.adamax import Adamax
from taugrad.optim.asgd import ASGD
from taugrad.optim.lbfgs import LBFGS
from taugrad.optim.nadam import NAdam
from taugrad.optim.optimizer import Optimizer
from taugrad.optim.radam import RAdam
from taugrad.optim.rmsprop import RMSprop
from taugrad.optim.rprop import Rprop
from taugrad.optim.sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "Rprop",
           "ASGD", "LBFGS", "lr_scheduler"]
